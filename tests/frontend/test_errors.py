"""User errors in kernels: the right exception class, at file:line:col, then the frames from the kernel down to
the error (source lines as written, carets), as Quadrants prints them, and no compiler-internal frames in the
traceback."""

from __future__ import annotations

import traceback

import pytest

import quadrants as qd

Nd = qd.types.NDArray
THIS = __file__
LINES = open(THIS).read().splitlines()


def where(marker: str) -> tuple[int, int]:
    """(line, 1-based column) of the first line containing `marker` (other than this helper's callers)."""
    for n, text in enumerate(LINES, 1):
        t = text.strip()
        if marker in text and not t.startswith(("def ", "check(", "with pytest")) and "where(" not in text:
            return n, text.index(marker) + 1
    raise AssertionError(marker)


def check(exc: BaseException, marker: str, caret_width: int | None = None) -> None:
    """`file:line:col` first, then the frame: `File "...", line N, in name:`, the source line as written and a
    caret under the marker's column."""
    line, col = where(marker)
    text = str(exc)
    lines = text.splitlines()
    assert any(ln.startswith(f"{THIS}:{line}:{col}: in ") for ln in lines), text  # then the qualified name
    assert f'File "{THIS}", line {line}, in ' in text, text
    src_line = LINES[line - 1].rstrip()
    caret_line = lines[lines.index(src_line) + 1]
    assert caret_line.index("^") == col - 1
    if caret_width is not None:
        assert caret_line.count("^") == caret_width


def test_unsupported_statement() -> None:
    @qd.kernel
    def k():
        with open("x"):  # marker:with
            pass

    with pytest.raises(qd.QuadrantsSyntaxError) as e:
        k()
    check(e.value, 'with open("x"):  # marker:with')
    assert "'with' in Quadrants kernels only supports qd.stream_parallel()" in str(e.value)


def test_unsupported_expression_points_at_the_expression() -> None:
    @qd.kernel
    def k(a: Nd[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = (lambda v: v)(1.0)

    with pytest.raises(qd.QuadrantsSyntaxError) as e:
        k(qd.ndarray(qd.f32, 2))
    check(e.value, "lambda v: v", caret_width=len("lambda v: v"))


def test_break_in_parallel_loop() -> None:
    @qd.kernel
    def k(a: Nd[qd.f32, 1]):
        for i in range(a.shape[0]):
            if a[i] > 0:
                break

    with pytest.raises(qd.QuadrantsSyntaxError, match="outermost") as e:
        k(qd.ndarray(qd.f32, 2))
    check(e.value, "break")


def test_range_with_step() -> None:
    @qd.kernel
    def k(a: Nd[qd.f32, 1]):
        for i in range(0, 10, 2):
            a[i] = 1

    with pytest.raises(qd.QuadrantsSyntaxError, match="step") as e:
        k(qd.ndarray(qd.f32, 10))
    check(e.value, "for i in range(0, 10, 2):")  # the loop's header, as Quadrants points at it


def test_type_error_in_binary_op() -> None:
    @qd.kernel
    def k(x: qd.f32) -> qd.i32:
        return x & 1

    with pytest.raises(qd.QuadrantsTypeError, match="unsupported operand") as e:
        k(1.0)
    check(e.value, "x & 1")
    assert isinstance(e.value, TypeError) and isinstance(e.value, qd.QuadrantsCompilationError)


def test_undefined_name() -> None:
    @qd.kernel
    def k() -> qd.i32:
        return not_defined_anywhere  # noqa: F821

    with pytest.raises(qd.QuadrantsNameError) as e:
        k()
    check(e.value, "not_defined_anywhere")


def test_error_inside_a_func_points_into_the_func() -> None:
    @qd.func
    def helper(x):
        return x.no_such_attribute

    @qd.kernel
    def k(x: qd.f32) -> qd.f32:
        return helper(x)

    with pytest.raises(qd.QuadrantsSyntaxError) as e:
        k(1.0)
    check(e.value, "x.no_such_attribute")


def test_wrong_index_count() -> None:
    @qd.kernel
    def k(a: Nd[qd.f32, 2]):
        a[0] = 1.0

    with pytest.raises(qd.QuadrantsSyntaxError, match="2 dimension") as e:
        k(qd.ndarray(qd.f32, (2, 2)))
    check(e.value, "a[0]")


def test_syntax_error_is_also_a_python_syntax_error() -> None:
    @qd.kernel
    def k():
        for i in range(3):
            pass
        else:
            pass

    with pytest.raises(SyntaxError):
        k()


def test_no_compiler_frames_in_traceback() -> None:
    @qd.kernel
    def k():
        x = {i for i in range(3)}  # noqa: F841 - a set comprehension: unsupported in kernels

    with pytest.raises(qd.QuadrantsSyntaxError) as info:
        k()
    e = info.value
    frames = [f.filename for f in traceback.extract_tb(e.__traceback__)]
    internal = [f for f in frames if "/quadrants/" in f and not f.endswith("/quadrants/lang/kernel.py")]
    assert not internal, frames
    assert e.__cause__ is None and e.__suppress_context__


def test_missing_annotation() -> None:
    @qd.kernel
    def k(a):
        pass

    with pytest.raises(qd.QuadrantsSyntaxError, match="needs a type annotation"):
        k(1)


@pytest.mark.parametrize(
    ("case", "exc", "words"),
    [("return_in_loop", qd.QuadrantsSyntaxError, "Return inside non-static if/for is not supported"),
     ("vector_transpose", qd.QuadrantsTypeError, "`transpose()` cannot apply to a vector"),
     ("literal_range", qd.QuadrantsTypeError, "exceeded the range of specified dtype"),
     ("ndrange_names", qd.QuadrantsSyntaxError, "not equal to the dimension of the ndrange")],
)  # fmt: skip
def test_messages_say_what_quadrants_says(case: str, exc: type, words: str) -> None:
    """The phrases real Quadrants' own tests match with pytest.raises(..., match=...)."""
    qd.init(arch=qd.cpu)

    @qd.kernel
    def return_in_loop(n: qd.i32) -> qd.i32:
        for i in range(1):
            for j in range(n):
                return j
        return 0

    @qd.kernel
    def vector_transpose() -> qd.f32:
        v = qd.math.vec3(1.0, 2.0, 3.0)
        return (v.transpose() @ v)[0, 0]

    @qd.kernel
    def literal_range() -> qd.i32:
        return qd.u16(-1)

    @qd.kernel
    def ndrange_names() -> qd.i32:
        s = 0
        for i in qd.ndrange(2, 3):
            s += 1
        return s

    kernels = {"return_in_loop": (return_in_loop, (3,)), "vector_transpose": (vector_transpose, ()),
               "literal_range": (literal_range, ()), "ndrange_names": (ndrange_names, ())}  # fmt: skip
    fn, args = kernels[case]
    with pytest.raises(exc) as e:
        fn(*args)
    assert words in str(e.value) and 'File "' in str(e.value)


def test_in_outside_qd_static_is_an_error_as_in_quadrants() -> None:
    @qd.kernel
    def outside(a: qd.template()) -> qd.i32:
        b = 0
        if a in [qd.i32, qd.u32]:
            b = 1
        return b

    @qd.kernel
    def inside(a: qd.template()) -> qd.i32:
        b = 0
        if qd.static(a in [qd.i32, qd.u32]):
            b = 1
        return b

    with pytest.raises(qd.QuadrantsCompilationError, match='"In" is only supported inside `qd.static`'):
        outside(qd.i32)
    assert inside(qd.i32) == 1 and inside(qd.f32) == 0


def test_typed_literals_take_one_scalar_expression_as_in_quadrants() -> None:
    @qd.kernel
    def two_args():
        a = qd.i64(1, 2)  # noqa: F841

    @qd.kernel
    def keywords():
        a = qd.f64(1, x=2)  # noqa: F841

    @qd.kernel
    def compound():
        a = qd.Vector([1])
        b = qd.f16(a)  # noqa: F841

    @qd.kernel
    def cast_a_vector() -> qd.f32:
        v = qd.cast(qd.Vector([1, 2]), qd.f32)
        return v[0] + v[1] + qd.f32(0.5)

    for k in (two_args, keywords):
        with pytest.raises(qd.QuadrantsSyntaxError, match="A primitive type can only decorate a single expression"):
            k()
    with pytest.raises(qd.QuadrantsSyntaxError, match="cannot decorate an expression with a compound type"):
        compound()
    assert cast_a_vector() == 3.5


def test_atomics_need_a_writable_first_operand_and_fields_are_not_operands() -> None:
    x = qd.field(int, shape=())

    @qd.kernel
    def list_target():
        y = qd.Vector([1, 2, 3])
        qd.atomic_min([3, 2, 1], y)

    @qd.kernel
    def expression_target(a: qd.i32) -> qd.i32:
        return qd.atomic_add(a + 1, 2)

    @qd.kernel
    def field_operand():
        a = qd.Vector([1, 1, 1])
        b = a * x  # noqa: F841

    for k, args in ((list_target, ()), (expression_target, (1,))):
        with pytest.raises(qd.QuadrantsSyntaxError, match="non-writable target as the first operand of 'atomic_"):
            k(*args)
    with pytest.raises(qd.QuadrantsTypeError, match="unsupported operand type"):
        field_operand()


@qd.func
def _innermost():
    no_such_name()  # marker:innermost  # noqa: F821 - the error under test


@qd.func
def _middle():
    _innermost()  # marker:middle


def test_an_error_in_a_func_shows_each_call_from_the_kernel_down() -> None:
    @qd.kernel
    def k():
        _middle()  # marker:outer

    with pytest.raises(qd.QuadrantsNameError) as e:
        k()
    text = str(e.value)
    check(e.value, "no_such_name()  # marker:innermost", caret_width=len("no_such_name"))
    frames = [where(m)[0] for m in ("_middle()  # marker:outer", "_innermost()  # marker:middle",
                                    "no_such_name()  # marker:innermost")]  # fmt: skip
    at = [text.index(f'File "{THIS}", line {n}, in {name}:') for n, name in zip(frames, ("k", "_middle", "_innermost"))]
    assert at == sorted(at)  # outermost first


def test_tabs_are_expanded_and_long_lines_come_in_pieces_with_their_carets() -> None:
    from quadrants.errors import SourceLoc

    line = "\tx = f(1,\t2)"
    loc = SourceLoc("f.py", 3, 5, 3, 6, line, "k")
    assert loc.frame().splitlines()[1:] == ["    x = f(1,    2)", "        ^"]  # tab stops every 4 columns
    long = "    " + "a" * 100 + "(1)"
    loc = SourceLoc("f.py", 7, 4, 7, 104, long, "mod.k")
    assert loc.frame().splitlines() == ['File "f.py", line 7, in k:', long[:80], "    " + "^" * 76, long[80:],
                                        "^" * 24]  # fmt: skip
