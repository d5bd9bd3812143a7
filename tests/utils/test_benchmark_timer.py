"""ember.utils.benchmark: Timer's measurements, Measurement's statistics and repr, Compare's
table. Expected statistics are worked out by hand from the raw times."""
import re

import pytest

import ember
from ember.utils.benchmark import Compare, Measurement, TaskSpec, Timer


def _m(times, number=1, **labels):
    return Measurement(number, list(times), TaskSpec("x + y", "pass", **labels))


def test_timeit_runs_stmt_with_setup_and_globals():
    counter = {"n": 0}

    def bump():
        counter["n"] += 1
    m = Timer("bump()", setup="y = torch.ones(2)", globals={"bump": bump},
              label="add", sub_label="2", description="ember").timeit(50)
    assert counter["n"] == 50 + 2  # the warmup runs max(50 // 100, 2) times first
    assert m.number_per_run == 50 and len(m.raw_times) == 1 and m.times == [m.raw_times[0] / 50]
    assert m.title == "add: 2" and m.description == "ember" and m.mean == m.median
    assert Timer("torch.ones(1)").timeit(3).mean > 0  # torch names ember in statements


def test_blocked_and_adaptive_autorange():
    seen = []
    m = Timer("x * 2", globals={"x": ember.ones(4)}).blocked_autorange(
        callback=lambda number, t: seen.append(number), min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02 and len(seen) == len(m.raw_times)
    assert set(seen) == {m.number_per_run}
    a = Timer("x * 2", globals={"x": ember.ones(4)}).adaptive_autorange(max_run_time=0.05)
    assert len(a.times) > 3 or sum(a.raw_times) > 0.05


def test_timer_argument_checks():
    with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
        Timer(lambda: 1)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        Timer("pass", global_setup="int x;")
    with pytest.raises(NotImplementedError):
        Timer("pass", language="c++")
    with pytest.raises(ValueError, match="Invalid language `fortran`."):
        Timer("pass", language="fortran")
    block = Timer("""
        y = 1
        y + 1
    """, label="block").timeit(2)
    assert block.stmt == "y = 1\ny + 1"
    with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
        Timer().repeat()


def test_num_threads_is_set_during_measurement_and_restored():
    before = ember.get_num_threads()
    seen = []
    Timer("seen.append(torch.get_num_threads())", globals={"seen": seen},
          num_threads=1).timeit(2)
    assert set(seen) == {1} and ember.get_num_threads() == before


def test_measurement_statistics():
    m = _m([1e-5, 2e-5, 3e-5, 4e-5], number=10)
    # per-run times 1, 2, 3, 4 us: median 2.5, quartiles 1.75 and 3.25 (linear interpolation)
    assert m.times == pytest.approx([1e-6, 2e-6, 3e-6, 4e-6])
    assert m.median == pytest.approx(2.5e-6) and m.mean == pytest.approx(2.5e-6)
    assert m.iqr == pytest.approx(1.5e-6)
    assert not m.meets_confidence() and m.has_warnings
    # no spread: the confidence interval is its 25 ns floor, log10(1 ms / 25 ns) capped at 4
    assert _m([1e-3] * 5).significant_figures == 4
    assert _m([2e-6] * 5).significant_figures == 1  # floor(log10(2 us / 25 ns))
    merged = Measurement.merge([_m([2e-6], number=2), _m([4e-6], number=2)])
    assert len(merged) == 1 and merged[0].times == [1e-6, 2e-6]


def test_measurement_repr():
    one = repr(_m([1.2e-6], label="add", sub_label="10", description="ones"))
    assert re.match(r"<.*Measurement object at 0x[0-9a-f]+>\n", one)
    assert one.split("\n", 1)[1] == ("add: 10\nones\n  1.20 us\n"
                                     "  1 measurement, 1 runs , 1 thread")
    many = repr(_m([5e-6, 4e-6, 6e-6, 5e-6], num_threads=4)).split("\n", 1)[1]
    assert many == ("x + y\n  Median: 5.00 us\n  IQR:    0.50 us (4.75 to 5.25)\n"
                    "  4 measurements, 1 runs per measurement, 4 threads\n"
                    "  WARNING: Interquartile range is 10.0% of the median measurement.\n"
                    "           This could indicate system fluctuation.")


def test_compare_table():
    rows = [_m([2e-6, 2e-6], label="add", sub_label="n=10", description="a"),
            _m([3e-6, 3e-6], label="add", sub_label="n=10", description="b"),
            _m([5e-6, 5e-6], label="add", sub_label="n=99", description="a")]
    text = str(Compare(rows))
    assert text.splitlines() == [
        "[--------- add ----------]",
        "            |   a   |   b ",
        "1 threads: ---------------",
        "      n=10  |  2.0  |  3.0",
        "      n=99  |  5.0  |     ",
        "",
        "Times are in microseconds (us)."]
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        Compare([3])
