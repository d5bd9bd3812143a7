"""Child process of ``benchmarks/run.py``'s memory section (imports only ONE library).

    python benchmarks/_memchild.py LIB WORKLOAD STEPS

(LIB: ember|torch, WORKLOAD: mlp|cnn|lstm|transformer)

Builds the model, data and optimizer, records the peak RSS so far (the baseline), runs STEPS
training steps and prints one JSON line: baseline and final peak RSS (``VmHWM`` of
/proc/self/status, in KiB; unlike ``ru_maxrss`` it is not inherited from the parent across exec)
and the last loss. Only one library is imported, so ember builds its model with its own
initialization (the weights do not matter to the memory used).
"""
import gc
import json
import os
import resource
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _workloads as W  # noqa: E402


def status_kib(field):
    """A ``Vm*`` field of /proc/self/status in KiB (``ru_maxrss`` where /proc is absent)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main(libname, workload, steps):
    if libname == "torch":
        import torch as lib
        lib.set_num_threads(2)
    else:
        import ember as lib
    L = {libname: lib}
    make = {"mlp": W.make_mlp_steps, "cnn": W.make_cnn_steps, "lstm": W.make_lstm_steps,
            "transformer": W.make_transformer_steps}[workload]
    step = make(L)[libname]
    gc.collect()
    base_peak, base_rss = status_kib("VmHWM"), status_kib("VmRSS")
    loss = None
    for _ in range(steps):
        loss = step()
    print(json.dumps({"base_peak_kib": base_peak, "base_rss_kib": base_rss,
                      "peak_kib": status_kib("VmHWM"), "rss_kib": status_kib("VmRSS"),
                      "loss": W.to_float(loss)}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
