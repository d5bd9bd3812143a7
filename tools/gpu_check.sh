#!/usr/bin/env bash
# ember's checks on a machine with an NVIDIA GPU, CuPy and PyTorch (with CUDA) installed:
# builds the extensions in place, runs the CuPy tests, the parity suite with ember's side on
# the GPU, and the GPU benchmarks. Logs go to $OUT (default ./gpu-check); the parity step's
# failures, with tracebacks, to $OUT/parity_failures.txt as they happen.
#
#     bash tools/gpu_check.sh [STEPS]      # STEPS: any of build,cupy,parity,bench,threads,
#                                          # scaling (default: all but scaling)
#
# scaling: the CPU thread-scaling tables at 1, 2, 4, 8 and 16 threads, with ember's pool
# threads pinned (the default) and not, for matmul, MLP and CNN (about 3 minutes; run it as
# a second call: with the rest it passes a command's 10-minute limit).
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
    tail -3 "$OUT/parity.log"
    # the failures again with ember on the CPU: those that fail there too come from this
    # machine's PyTorch (not necessarily the version the suite is written for), not the GPU
    if [[ -s "$OUT/parity_failures.txt" ]]; then
        sed -n 's/^=== \(.*\) (\(setup\|call\|teardown\))$/\1/p' "$OUT/parity_failures.txt" \
            | sort -u >"$OUT/failed_ids.txt"
        sed 's/::.*//' "$OUT/failed_ids.txt" | uniq -c | sort -rn | head -40  # failures per file
        rm -f "$OUT/cpu_failures.txt"
        OMP_NUM_THREADS=1 EMBER_FAILURE_LOG="$OUT/cpu_failures.txt" timeout 120 $PY -c "
import sys, pytest
ids = open(sys.argv[1]).read().split(chr(10))
sys.exit(pytest.main([*sys.argv[2:], *[i for i in ids if i]]))" "$OUT/failed_ids.txt" \
            "${xdist[@]}" -q -p no:cacheprovider -p no:warnings --timeout 60 >"$OUT/cpu_rerun.log" 2>&1
        touch "$OUT/cpu_failures.txt"
        sed -n 's/^=== \(.*\) (\(setup\|call\|teardown\))$/\1/p' "$OUT/cpu_failures.txt" \
            | sort -u | comm -23 "$OUT/failed_ids.txt" - >"$OUT/device_only_failures.txt"
        echo "failed on cuda: $(wc -l <"$OUT/failed_ids.txt"), of which on the CPU too:" \
             "$(sort -u "$OUT/cpu_failures.txt" | grep -c '^=== '), on cuda only:" \
             "$(wc -l <"$OUT/device_only_failures.txt") (device_only_failures.txt)"
    fi
fi
if has bench; then
    timeout "${BENCH_TIMEOUT:-120}" $PY benchmarks/run.py --device cuda --only mlp,cnn,transformer \
        2>&1 | tee "$OUT/bench_cuda.txt" | tail -30
    timeout "${AMP_TIMEOUT:-90}" $PY benchmarks/bench_amp.py --device cuda --dtype float16 \
        --rounds 5 2>&1 | tee "$OUT/bench_amp_cuda.txt" | tail -8
fi
if has scaling; then
    for pin in "" --no-pin-threads; do
        timeout "${SCALING_TIMEOUT:-150}" $PY benchmarks/bench_threads.py --threads 1,2,4,8,16 \
            --rounds 5 --only matmul,mlp,cnn $pin 2>&1 | tee -a "$OUT/bench_scaling.txt" | tail -12
    done
fi
if has threads; then
    timeout "${THREADS_TIMEOUT:-120}" $PY benchmarks/bench_threads.py --threads 1,2,16 --rounds 5 \
        2>&1 | tee "$OUT/bench_threads.txt" | tail -30
fi
