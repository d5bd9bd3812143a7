"""DataLoader worker faults: a worker killed mid-batch, a killed main process, interpreter exit
with live workers, and the workers' intra-op thread count.

Each scenario that could hang runs in a child interpreter with a timeout, several times with
varied timing, since the failures were races. Batches are 32 MB so that a batch is still being
written into the pipe when the kill lands. The expected messages are PyTorch 2.13's."""
import ast
import os
import re
import select
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import ember
from ember.utils.data import DataLoader, Dataset

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# the child's part of every scenario: a dataset of 32 MB samples, made in the workers
_BIG_DATASET = """
import os, random, signal, sys, time
import ember
from ember.utils.data import DataLoader, Dataset

class Big(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return ember.zeros(8 * 1024 * 1024)  # float32: 32 MB
"""


def _child_command(tmp_path, body):
    """The command running ``body`` (after the dataset above) as a script in a fresh
    interpreter, and the environment that makes it import this ember."""
    script = tmp_path / "scenario.py"
    script.write_text(_BIG_DATASET + textwrap.dedent(body))
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return [sys.executable, str(script)], env


def _run_child(tmp_path, body, timeout=60):
    command, env = _child_command(tmp_path, body)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)


def _running(pid):
    """Whether ``pid`` is a process that has not exited (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _wait_gone(pids, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end and any(_running(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if _running(p)]


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="uses /proc and fork")


@linux_only
def test_worker_killed_while_sending_a_batch_raises(tmp_path):
    # The next batch's worker is killed while it writes its 32 MB batch: the main process used
    # to wait forever for the rest of the message. One worker: its next batch is mid-write
    # unless the kill comes first; two workers: either worker may be the one writing.
    tries = 6
    result = _run_child(tmp_path, f"""
        random.seed(0)
        for attempt in range({tries}):
            num_workers = 1 + attempt % 2
            it = iter(DataLoader(Big(), batch_size=1, num_workers=num_workers))
            next(it)  # batch 0; the next batch is being written into the pipe meanwhile
            victim = it._workers[num_workers - 1].pid
            time.sleep(random.uniform(0.0, 0.3))
            os.kill(victim, signal.SIGKILL)
            killed_at = time.monotonic()
            try:
                for _ in it:
                    pass
                print("no error", flush=True)
            except RuntimeError as e:
                print(repr((victim, round(time.monotonic() - killed_at, 2), str(e),
                            str(e.__cause__))), flush=True)
            del it
    """)
    assert result.returncode == 0, result.stderr
    outcomes = [ast.literal_eval(line) for line in result.stdout.splitlines()]
    assert len(outcomes) == tries
    for victim, seconds, message, cause in outcomes:
        assert message == f"DataLoader worker (pid(s) {victim}) exited unexpectedly"
        assert cause == f"DataLoader worker (pid {victim}) is killed by signal: Killed. "
        assert seconds < 5


@linux_only
def test_worker_exit_code_is_reported(tmp_path):
    result = _run_child(tmp_path, """
        class ExitsAt3(Dataset):
            def __len__(self):
                return 8

            def __getitem__(self, i):
                if i == 3:
                    os._exit(3)
                return i

        try:
            list(DataLoader(ExitsAt3(), batch_size=1, num_workers=2))
        except RuntimeError as e:
            print(str(e))
            print(str(e.__cause__))
    """)
    assert result.returncode == 0, result.stderr
    message, cause = result.stdout.splitlines()
    pid = re.fullmatch(r"DataLoader worker \(pid\(s\) (\d+)\) exited unexpectedly", message)[1]
    assert cause == (f"DataLoader worker (pid {pid}) exited unexpectedly with exit code 3. "
                     "Details are lost due to multiprocessing. Rerunning with num_workers=0 "
                     "may give better error trace.")


@linux_only
@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_workers_exit_when_main_process_is_killed(tmp_path, context):
    # The main process dies while the workers write 32 MB batches nobody reads: the workers
    # used to stay forever, blocked flushing those batches at exit.
    command, env = _child_command(tmp_path, f"""
        if __name__ == "__main__":
            it = iter(DataLoader(Big(), batch_size=1, num_workers=2,
                                 multiprocessing_context={context!r}))
            next(it)
            print(*(w.pid for w in it._workers), flush=True)
            time.sleep(120)
    """)
    for attempt in range(2 if context == "fork" else 1):
        main = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
        workers = []
        try:
            assert select.select([main.stdout], [], [], 30)[0], "no worker pids in 30 s"
            workers = [int(pid) for pid in main.stdout.readline().split()]
            assert len(workers) == 2
            time.sleep(0.1 * attempt)
            main.send_signal(signal.SIGKILL)
            main.wait(timeout=10)
            assert _wait_gone(workers, timeout=6) == []
        finally:
            main.kill()
            main.wait()
            main.stdout.close()
            for pid in workers:  # a failed run's orphans
                if _running(pid):
                    os.kill(pid, signal.SIGKILL)


@linux_only
def test_live_iterators_at_interpreter_exit_are_quiet(tmp_path):
    # iterators still running their workers when the script ends, one of them with batches
    # being written: no "Exception ignored in __del__" and no worker left behind
    result = _run_child(tmp_path, """
        plain = iter(DataLoader(Big(), batch_size=1, num_workers=2))
        next(plain)
        persistent = DataLoader(Big(), batch_size=1, num_workers=2, persistent_workers=True)
        epoch = iter(persistent)
        next(epoch)
        print(*(w.pid for w in plain._workers + epoch._workers), flush=True)
    """, timeout=60)
    assert result.stderr == ""
    assert result.returncode == 0
    workers = [int(pid) for pid in result.stdout.split()]
    assert len(workers) == 4
    assert _wait_gone(workers, timeout=5) == []


_seen_by_worker_init = []


class ThreadsInWorker(Dataset):
    def __init__(self, torch_module):
        self.torch_module = torch_module

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return self.torch_module.get_num_threads(), _seen_by_worker_init[-1]


def _record_threads(module):
    def init(worker_id):
        _seen_by_worker_init.append(module.get_num_threads())
    return init


def _threads_in_workers(module, loader_module):
    loader = loader_module.DataLoader(ThreadsInWorker(module), batch_size=None, num_workers=2,
                                      worker_init_fn=_record_threads(module))
    return sorted(set(tuple(int(v) for v in sample) for sample in loader))


@linux_only
def test_workers_run_one_intra_op_thread():
    before = ember.get_num_threads()
    ember.set_num_threads(3)
    try:
        # one thread in __getitem__ and already in worker_init_fn; the main process keeps 3
        assert _threads_in_workers(ember, ember.utils.data) == [(1, 1)]
        assert ember.get_num_threads() == 3
    finally:
        ember.set_num_threads(before)


@linux_only
def test_worker_init_fn_may_raise_the_thread_count():
    def init(worker_id):
        ember.set_num_threads(2)
        _seen_by_worker_init.append(ember.get_num_threads())

    loader = DataLoader(ThreadsInWorker(ember), batch_size=None, num_workers=1,
                        worker_init_fn=init)
    assert {tuple(sample) for sample in loader} == {(2, 2)}


@linux_only
def test_workers_thread_count_matches_torch():
    pytest.importorskip("torch")
    import torch.utils.data
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        expected = _threads_in_workers(torch, torch.utils.data)
    finally:
        torch.set_num_threads(before)
    assert expected == [(1, 1)]
    assert _threads_in_workers(ember, ember.utils.data) == expected
