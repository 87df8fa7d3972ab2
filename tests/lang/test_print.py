# ruff: noqa: UP032, F523, F525  (the kernels exercise str.format as programs write it)
"""In-kernel `print` with f-strings and `str.format`: printf specs, positional and keyword fields, vectors.

The expected lines are what Quadrants 1.3.3 printed for the same kernels (run side by side while writing
these); where they follow from C's printf the comment says which directive it is.
"""

from __future__ import annotations

import pytest

import quadrants as qd
from quadrants.ir import printf
from tests.helpers import define


def _lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("P ")]


def test_specs_on_scalars_vectors_and_matrices(capfd: pytest.CaptureFixture[str]) -> None:
    x = qd.Matrix.field(2, 3, dtype=qd.f32, shape=())
    z = qd.Matrix.field(2, 3, dtype=qd.i32, shape=())

    @qd.kernel
    def k(v: qd.f32, u: qd.u32, n: qd.i64, d: qd.f64):
        x[None][0, 0] = -1.0
        print("P {:.2f} {:e}".format(x[None], v))
        print(f"P {z[None]:.3d}")
        print(f"P {d} {d:.3} {d:e} {u:x} {u:#o} {n:+d} {n:5d}|{n:-5d}|")
        print(f"P {v=} {(v * 2):.1f}")

    k(233.3, 255, -42, 2.5)
    assert _lines(capfd.readouterr().out) == [
        "P [[-1.00, 0.00, 0.00], [0.00, 0.00, 0.00]] 2.333000e+02",
        "P [[000, 000, 000], [000, 000, 000]]",
        # f64 prints as %.12f; a precision alone keeps the conversion; x/o print unsigned values in hex/octal
        "P 2.500000000000 2.500 2.500000000000e+00 ff 0377 -42   -42|-42  |",
        "P v=233.300003 466.6",
    ]


def test_format_fields_positional_keyword_and_constants(capfd: pytest.CaptureFixture[str]) -> None:
    @qd.kernel
    def k(v: qd.f32):
        print("P {2:d} {1:.2} {:.10}".format(3, 2, 1))  # `{}` counts from 0 beside `{2}`
        print("P {2:.1} {:.2} {k:.4e} {0:.5}".format(3.0, 2.0, 1.0, k=v))  # a spec prints a constant at run time
        print("P {} {name} {value}".format(v, name=999, value=1.5), (1, 2), [v, 3])  # no spec: Python's str
        print("P 100% {}".format(v), f"{3.5} {7:03d}")

    k(233.3)
    assert _lines(capfd.readouterr().out) == [
        "P 1 02 0000000003",
        "P 1.0 3.00 2.3330e+02 3.00000",
        "P 233.300003 999 1.5 [1, 2] [233.300003, 3]",
        "P 100% 233.300003 3.5 007",
    ]


@pytest.mark.parametrize(
    "fmt, message",
    [
        ("'{:.2d}'.format(x)", r"'.2d' doesn't match 'f32'\."),
        ("'{:u}'.format(n)", r"'u' doesn't match 'i32'\."),
        ("f'{n:e}'", r"'e' doesn't match 'i32'\."),
        ("f'{x:s}'", r"conversion 's' is not supported"),
    ],
)
def test_spec_that_cannot_print_the_type_is_a_type_error(fmt: str, message: str) -> None:
    k = define(f"@qd.kernel\ndef k(x: qd.f32, n: qd.i32):\n    print({fmt})\n")["k"]
    with pytest.raises(qd.QuadrantsTypeError, match=message):
        k(1.0, 2)


@pytest.mark.parametrize(
    "call, message",
    [
        ("'{0} {1} {2}'.format(1, 2, 3, 4)", r"Expected 3 positional argument\(s\), but received 4 instead\."),
        ("'{0} {1} {2}'.format(1, 2)", r"Expected 3 positional argument\(s\), but received 2 instead\."),
        ("''.format(k=x)", r"Keyword 'k' not used\."),
        ("'{k}'.format()", r"Keyword 'k' not found\."),
    ],
)
def test_format_arguments_must_match_the_fields(call: str, message: str) -> None:
    k = define(f"@qd.kernel\ndef k(x: qd.f32):\n    print({call})\n")["k"]
    with pytest.raises(qd.QuadrantsSyntaxError, match=message):
        k(1.0)


def test_kernels_differing_only_in_a_spec_print_their_own(capfd: pytest.CaptureFixture[str]) -> None:
    """The spec is part of the IR text, so the offline key tells the two apart (same name, same body)."""

    def make(spec: str):  # type: ignore[no-untyped-def]
        @qd.kernel
        def k(v: qd.f32):
            print(f"P {v:{spec}}")

        return k

    make(".1f")(2.0)
    make(".3e")(2.0)
    assert _lines(capfd.readouterr().out) == ["P 2.0", "P 2.000e+00"]


def test_merge_keeps_the_users_flags_width_precision_and_conversion_group() -> None:
    assert printf.merge(".2", "%f") == "%.2f"
    assert printf.merge("-+10e", "%.12f") == "%-+10.12e"
    assert printf.merge("lli", "%lld") == "%lli"  # the length is codegen's (values are widened to 64 bits)
    assert printf.merge("#x", "%llu") == "%#llx"
    assert printf.check("*d", qd.i32) is not None and printf.check("5.3q", qd.f32) is not None
