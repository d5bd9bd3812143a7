#!/usr/bin/env bash
# ember's checks on a machine with an NVIDIA GPU, CuPy and PyTorch (with CUDA) installed:
# builds the extensions in place, runs the CuPy tests, the parity suite with ember's side on
# the GPU, and the GPU benchmarks. Logs go to $OUT (default ./gpu-check); the parity step's
# failures, with tracebacks, to $OUT/parity_failures.txt as they happen.
#
#     bash tools/gpu_check.sh [STEPS]      # STEPS: any of build,cupy,parity,bench,threads
#
# Environment: PARITY_ARGS (extra pytest arguments for the parity step, e.g. a -k filter or
# test paths), PARITY_TIMEOUT / BENCH_TIMEOUT / THREADS_TIMEOUT (seconds, default 300 / 120 /
# 120), WORKERS (pytest-xdist workers for the parity step, default 12; 0: no xdist).
# On an H200 (16 cores) the whole run took about 5 minutes, the parity step about 4.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-check}
mkdir -p "$OUT"
STEPS=${1:-build,cupy,parity,bench,threads}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PY=${PY:-python3}
has() { [[ ",$STEPS," == *",$1,"* ]]; }

nvidia-smi -L
$PY -c "import sys, numpy, cupy, torch; print(sys.version.split()[0], 'numpy', numpy.__version__,
'cupy', cupy.__version__, 'torch', torch.__version__, 'cuda', torch.cuda.is_available())"

if has build; then
    $PY setup.py build_ext --inplace -j 16 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
    echo "build: ok"
fi
if has cupy; then
    $PY -m pytest tests/backend/test_cupy.py tests/backend/test_cupy_namespace.py -p no:cacheprovider \
        -rfE --tb=short 2>&1 | tee "$OUT/cupy.log" | tail -40
fi
if has parity; then
    xdist=()
    [[ ${WORKERS:-12} != 0 ]] && xdist=(-n "${WORKERS:-12}")
    # -v -v against addopts' -q: one line per test, so a run stopped by the timeout still says
    # what passed and failed
    # one BLAS/OpenMP thread per worker: the workers share the CPUs
    # each failure's traceback lands in parity_failures.txt as it happens (tests/conftest.py)
    rm -f "$OUT/parity_failures.txt"
    OMP_NUM_THREADS=1 EMBER_FAILURE_LOG="$OUT/parity_failures.txt" EMBER_PARITY_DEVICE=cuda timeout "${PARITY_TIMEOUT:-300}" $PY -m pytest "${xdist[@]}" -v -v \
        -p no:cacheprovider -p no:warnings --timeout 60 --tb=short -rfE ${PARITY_ARGS:-tests/parity} \
        >"$OUT/parity.log" 2>&1
    echo "parity: exit $?"
    grep -cE " PASSED " "$OUT/parity.log" | sed 's/^/passed: /'
    grep -E "^FAILED |^ERROR " "$OUT/parity.log" | sed -E 's/::.*//' | sort | uniq -c | sort -rn | head -40
    tail -3 "$OUT/parity.log"
fi
if has bench; then
    timeout "${BENCH_TIMEOUT:-120}" $PY benchmarks/run.py --device cuda --only mlp,cnn,transformer \
        2>&1 | tee "$OUT/bench_cuda.txt" | tail -30
fi
if has threads; then
    timeout "${THREADS_TIMEOUT:-120}" $PY benchmarks/bench_threads.py --threads 1,2,16 --rounds 5 \
        2>&1 | tee "$OUT/bench_threads.txt" | tail -30
fi
