"""The lanes of a subgroup (a CUDA warp of 32): the primitive operations of `qd.simt.subgroup` (which become
`ir.Simt` statements: frontend/simt_calls.py), its size, and the helpers of the kernel-language code built on them
(subgroup.py, reductions.py, sorting.py)."""

# mypy: disable-error-code="valid-type, operator, no-any-return"

from __future__ import annotations

from quadrants.frontend.func import func
from quadrants.frontend.intrinsics import _kernel_only, max, min, static, static_assert
from quadrants.types.annotations import template

# ---- primitives ---------------------------------------------------------------------------------------------

invocation_id = _kernel_only("simt.subgroup.invocation_id")  # the lane, an i32 in [0, group_size())
shuffle = _kernel_only("simt.subgroup.shuffle")  # (value, lane): lane `lane`'s value (i32/u32/f32/i64/u64/f64)
broadcast = _kernel_only("simt.subgroup.broadcast")  # (value, lane): the same, for a lane every thread names
shuffle_up = _kernel_only("simt.subgroup.shuffle_up")  # (value, delta): lane - delta's (its own below 0)
shuffle_down = _kernel_only("simt.subgroup.shuffle_down")  # (value, delta): lane + delta's (its own past the end)
shuffle_xor = _kernel_only("simt.subgroup.shuffle_xor")  # (value, mask): lane ^ mask's
ballot = _kernel_only("simt.subgroup.ballot")  # (predicate): a u64 with bit k set where lane k's is non-zero
sync = _kernel_only("simt.subgroup.sync")  # every lane reaches it before any goes on
mem_fence = _kernel_only("simt.subgroup.mem_fence")  # orders this lane's memory accesses (the block's scope)
_vote_all = _kernel_only("simt.subgroup._vote_all")  # (predicate): 1 where every lane's is non-zero (one instruction)
_vote_any = _kernel_only("simt.subgroup._vote_any")
_identity = _kernel_only("simt.subgroup._identity")  # (op, value): op's identity in value's type


def group_size() -> int:
    """Lanes per subgroup, a Python int (usable as a template argument): 32 on the CUDA backend, else 0."""
    from quadrants.lang import program

    cfg = program.current_config()
    return 32 if cfg is not None and cfg.arch.name == "cuda" else 0


def log2_group_size() -> int:
    size = group_size()
    if size <= 0 or size & (size - 1):
        raise ValueError(f"the subgroup size is {size}: subgroup operations need the CUDA backend")
    return size.bit_length() - 1


@func
def _check_tile(log2_size: template()):
    """At compile time: a tile of 2**log2_size lanes fits in the subgroup."""
    static_assert(isinstance(log2_size, int) and 0 <= log2_size <= log2_group_size(),
                  "log2_size must be a compile-time int in [0, log2(group_size())] = [0, 5]")  # fmt: skip


@func
def _tile_lane(log2_size: template()):
    """The lane's index in its tile of 2**log2_size lanes."""
    return invocation_id() & static((1 << log2_size) - 1)


@func
def _combine(a, b, op: template()):
    """`a op b` for an operation named by a string, or a `qd.func` of two values (`op(a, b)`, in that order: the
    earlier lanes' value first, for operations that do not commute)."""
    r = a
    if static(not isinstance(op, str)):
        r = op(a, b)
    elif static(op == "add"):
        r = a + b
    elif static(op == "mul"):
        r = a * b
    elif static(op == "min"):
        r = min(a, b)
    elif static(op == "max"):
        r = max(a, b)
    elif static(op == "and"):
        r = a & b
    elif static(op == "or"):
        r = a | b
    else:
        r = a ^ b
    return r
