"""`@qd.kernel(graph=True)`: accepted, and the kernel's loops run in order with the results of a plain kernel
(Quadrants 1.3.3 on the CPU: two launches of this kernel on zeros give 6.0 everywhere)."""

import numpy as np

import quadrants as qd


def test_graph_kernel_runs_loops_in_order() -> None:
    qd.init(arch=qd.cpu)

    @qd.kernel(graph=True)
    def two_loops(x: qd.types.NDArray[qd.f32, 1]) -> None:
        for i in range(x.shape[0]):
            x[i] += 1.0
        for i in range(x.shape[0]):
            x[i] *= 2.0

    @qd.kernel
    def plain(x: qd.types.NDArray[qd.f32, 1]) -> None:
        for i in range(x.shape[0]):
            x[i] += 1.0
        for i in range(x.shape[0]):
            x[i] *= 2.0

    a = qd.ndarray(qd.f32, (8,))
    b = qd.ndarray(qd.f32, (8,))
    for _ in range(2):
        two_loops(a)
        plain(b)
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
    np.testing.assert_array_equal(a.to_numpy(), np.full(8, (1.0 * 2 + 1) * 2, np.float32))
