"""Small whole graphs compiled end to end and compared with graph.run (max relative error <= 1e-4)."""

from __future__ import annotations

import pytest
import torch
from lower_testutil import check_graph

from lower import LoweringError, compile_graph
from lower.cuda import driver as cuda_driver
from lower.plan import plan_kernels
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.graph import GraphError
from rewrite.verification.numeric import normwise_rel_err

G = torch.Generator().manual_seed(7)


def rnd(*shape, scale=1.0):
    return torch.randn(shape, generator=G) * scale


def mlp():
    b = GraphBuilder("mlp")
    x = b.input("x", (32, 100))
    h = b.relu(b.linear(x, b.weight("w1", rnd(200, 100, scale=0.1)), b.weight("b1", rnd(200))))
    h = b.gelu(b.linear(h, b.weight("w2", rnd(50, 200, scale=0.1)), b.weight("b2", rnd(50))))
    y = b.softmax(b.linear(h, b.weight("w3", rnd(10, 50, scale=0.1)), b.weight("b3", rnd(10))), axis=-1)
    return b.build([y])


def conv_block():
    b = GraphBuilder("block")
    x = b.input("x", (2, 16, 14, 14))

    def cbr(x, cin, cout, name, relu=True, k=3):
        y = b.conv2d(
            x, b.weight(name + "w", rnd(cout, cin, k, k, scale=(cin * k * k) ** -0.5)), padding=(k // 2, k // 2)
        )
        y = b.batchnorm(y, *(b.weight(name + p, torch.rand(cout, generator=G) + 0.5) for p in "gbmv"))
        return b.relu(y) if relu else y

    y = cbr(x, 16, 16, "c1")
    y = cbr(y, 16, 16, "c2", relu=False)
    y = b.relu(b.add(y, x))
    y = b.maxpool2d(y, kernel=(3, 3), stride=(2, 2), padding=(1, 1))
    y = cbr(y, 16, 32, "c3", k=1)
    return b.build([b.global_avgpool(y)])


def attention(S=33, D=64, H=4):
    b = GraphBuilder("attn")
    x = b.input("x", (1, S, D))

    def proj(t, name):
        return b.linear(t, b.weight(name + "w", rnd(D, D, scale=D**-0.5)), b.weight(name + "b", rnd(D, scale=0.1)))

    def heads(t):
        return b.transpose(b.reshape(t, shape=(1, S, H, D // H)), perm=(0, 2, 1, 3))

    q, k, v = heads(proj(x, "q")), heads(proj(x, "k")), heads(proj(x, "v"))
    att = b.softmax(b.smul(b.matmul(q, b.transpose(k, perm=(0, 1, 3, 2))), scalar=(D // H) ** -0.5), axis=-1)
    o = b.reshape(b.transpose(b.matmul(att, v), perm=(0, 2, 1, 3)), shape=(1, S, D))
    o = b.layernorm(b.add(proj(o, "o"), x), b.weight("lnw", rnd(D)), b.weight("lnb", rnd(D)))
    return b.build([o])


def test_mlp():
    cg = check_graph(mlp())
    assert cg.kernels == 4  # three GEMMs with fused bias/activation epilogues, one softmax
    assert "matmul%4 >add%6 >relu%7" in cg.plan


def test_conv_bn_relu_block():
    cg = check_graph(conv_block())
    assert "conv2d%2 >batchnorm%7 >relu%8" in cg.plan
    assert ">add%" in cg.plan  # the residual add is a conv epilogue


def test_attention_block():
    cg = check_graph(attention())
    assert "<transpose" in cg.plan  # head transposes fold into the matmul operands


@pytest.mark.parametrize("threads", [1, 2])
def test_threads_agree(threads):
    g = attention(S=64, D=128, H=2)
    check_graph(g, threads=threads)


def test_unfused_and_unscheduled_agree():
    g = conv_block()
    inputs = g.random_inputs(3)
    ref = compile_graph(g)(inputs)[0]
    for kw in ({"fuse": False}, {"schedule": False}):
        got = compile_graph(g, **kw)(inputs)[0]
        assert normwise_rel_err(got, ref) <= 1e-4


def test_the_runtime_compiles_the_kernels_the_shared_planner_plans():
    """``lower.plan`` is the one planner: a compiled graph's constants, fusion and kernel names are its, and
    the constants are ``Graph.weight_values`` of the live nodes (the one weight-only fold)."""
    g = conv_block()
    cg = compile_graph(g)
    plan = plan_kernels(g, cg.target, grid=cg.backend.grid)
    assert str(plan.fusion) == cg.plan and [bk.kernel.name for bk in plan.built] == [b.kernel.name for b in cg.built]
    folded = g.weight_values(g.live())
    assert set(cg.consts) == set(plan.consts) == set(folded)
    assert all(torch.equal(cg.consts[v], folded[v]) for v in folded)


def test_outputs_that_are_inputs_views_and_constants():
    b = GraphBuilder("odd")
    x = b.input("x", (2, 3))
    w = b.weight("w", rnd(2, 3))
    r = b.reshape(x, shape=(3, 2))
    y = b.add(x, w)
    g = b.build([x, r, w, b.smul(w, scalar=2.0), y, y])
    cg = check_graph(g, tol=0)
    out = cg(g.random_inputs(0))
    out[2].add_(1.0)  # returned constants are copies
    check_graph(g, tol=0)


def test_positional_inputs_and_errors():
    b = GraphBuilder("pos")
    g = b.build([b.sub(b.input("a", (3,)), b.input("b", (3,)))])
    cg = compile_graph(g)
    a, c = torch.ones(3), torch.arange(3.0)
    assert torch.equal(cg([a, c])[0], a - c)
    with pytest.raises(GraphError):
        cg([a])
    with pytest.raises(GraphError):
        cg({"a": a, "b": torch.ones(4)})
    if cuda_driver.device_count() == 0:  # the GPU target without a device: refused up front
        with pytest.raises(LoweringError, match="needs a CUDA device"):
            compile_graph(g, target="cuda")
    with pytest.raises(GraphError, match="on meta"):
        cg([a, torch.ones(3, device="meta")])


def test_non_contiguous_inputs_and_double_inputs_refused():
    b = GraphBuilder("nc")
    g = b.build([b.relu(b.input("x", (4, 3)))])
    x = torch.randn(3, 4, dtype=torch.float64).t()
    cg = compile_graph(g)
    got = cg({"x": x.float()})[0]
    assert torch.allclose(got, torch.relu(x.float()))
    with pytest.raises(GraphError, match="float64; expected torch.float32"):  # never rounded silently
        cg({"x": x})


def test_buffer_reuse_shrinks_the_arena():
    b = GraphBuilder("chain")
    x = b.input("x", (64, 64))
    y = x
    for k in range(6):  # unfused so that every step has its own buffer
        y = b.softmax(b.matmul(y, b.weight(f"w{k}", rnd(64, 64, scale=0.1))), axis=-1)
    g = b.build([y])
    cg = check_graph(g)
    assert cg.arena_bytes < cg.temp_bytes_unshared / 2


def test_info():
    cg = compile_graph(mlp())
    assert cg.compile_seconds > 0
    assert cg.plan.startswith("fusion plan for mlp")
    assert "kernel k0_matmul" in cg.kernel_source(0)
    assert "define void @" in cg.llvm_ir(0)


def test_output_buffers_are_recycled_only_when_released():
    b = GraphBuilder("rec")
    g = b.build([b.relu(b.input("x", (100000,)))])
    cg = compile_graph(g)
    a = torch.randn(100000)
    o1 = cg([a])[0]
    p1 = o1.data_ptr()
    o2 = cg([a])[0]
    assert o2.data_ptr() != p1 and torch.equal(o1, o2)  # still held: a new buffer
    del o1, o2
    o3 = cg([a])[0]
    p3 = o3.data_ptr()
    del o3
    o4 = cg([a])[0]
    assert o4.data_ptr() == p3  # dropped: reused
    view = o4[5:10]
    del o4
    o5 = cg([-a])[0]
    assert o5.data_ptr() != p3 and torch.equal(view, torch.relu(a[5:10]))  # a view keeps it alive


def test_torch_module_through_the_frontend():
    from torch import nn

    from rewrite import frontends

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False)
            self.fc = nn.Linear(8, 5)

        def forward(self, x):
            y = torch.relu(self.bn(self.conv(x)))
            y = torch.relu(self.dw(y)) + y
            y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
            return torch.softmax(self.fc(y), dim=-1)

    torch.manual_seed(0)
    net = Net().eval()
    with torch.no_grad():
        net.bn.running_mean.uniform_(-0.5, 0.5)
        net.bn.running_var.uniform_(0.5, 1.5)
    x = torch.randn(2, 3, 17, 17)
    g = frontends.from_torch(net, (x,))
    cg = check_graph(g, [x])
    with torch.no_grad():
        ref = net(x)
    assert normwise_rel_err(cg([x])[0], ref) <= 1e-4


def test_constant_b_is_prepacked_even_when_a_is_packed_too():
    """A transposed (packed per block) and a weight B (packed once): the kernel keeps its parallel root."""
    b = GraphBuilder("ab")
    x = b.input("x", (1, 16, 64, 64))
    y = b.reshape(b.transpose(x, perm=(0, 2, 1, 3)), shape=(64, 1024))
    g = b.build([b.matmul(y, b.weight("w", rnd(1024, 256, scale=0.03)))])
    cg = check_graph(g, threads=2)
    assert cg.prepacked_bytes >= 1024 * 256 * 4
    assert cg._launches[0].par_extent is not None


def test_constant_packing_on_several_compile_threads_packs_what_one_thread_packs():
    """The packing kernels of constant operands are compiled and run on the compile threads (with one job,
    ``_each_kernel``; with two, each kernel's as it is lowered): every kernel gets its own packed weight, and
    the graph computes what it computes compiled on one."""
    from rewrite import config

    b = GraphBuilder("three")
    x = b.input("x", (1, 24, 20, 20))
    for i, (cin, cout) in enumerate([(24, 40), (40, 56), (56, 72)]):
        x = b.relu(b.op("conv2d", x, b.weight(f"w{i}", rnd(cout, cin, 1, 1, scale=0.2))))
    g = b.build([x])
    with config.COMPILE_JOBS.set("1"):
        one = check_graph(g, threads=1)
    with config.COMPILE_JOBS.set("2"):
        two = check_graph(g, threads=1)
    assert two.prepacked_bytes == one.prepacked_bytes > 0
    inputs = g.random_inputs(1)
    assert torch.equal(two(inputs)[0], one(inputs)[0])


def test_with_two_compile_jobs_a_kernel_compiles_while_the_next_is_lowered(monkeypatch):
    """The pipelined compile: kernel 0 is compiled on the pool while the planner lowers kernel 1 (which waits
    here until it is; lowered all first, it would wait in vain)."""
    import threading

    import lower.plan as plan_mod
    from lower.runtime import CompiledGraph
    from rewrite import config

    first_compiled = threading.Event()
    lowered = []
    build, compile_fn = plan_mod.build_kernel, CompiledGraph._kernel_fn

    def lowering(graph, grp, *a, name, **kw):
        if lowered:
            first_compiled.wait(timeout=30)
        lowered.append((name, first_compiled.is_set()))
        return build(graph, grp, *a, name=name, **kw)

    def compiling(self, k, bk):
        fn = compile_fn(self, k, bk)
        if k == 0:
            first_compiled.set()
        return fn

    monkeypatch.setattr(plan_mod, "build_kernel", lowering)
    monkeypatch.setattr(CompiledGraph, "_kernel_fn", compiling)
    b = GraphBuilder("two")
    x = b.relu(b.op("conv2d", b.input("x", (1, 8, 10, 10)), b.weight("w", rnd(16, 8, 1, 1, scale=0.2))))
    g = b.build([b.softmax(x, axis=1)])
    with config.COMPILE_JOBS.set("2"):
        cg = check_graph(g, threads=1)
    assert cg.kernels == 2 and [seen for _, seen in lowered] == [False, True]
