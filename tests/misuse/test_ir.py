"""Misuse of the graph IR (issue 46): the builder's arguments, another builder's values, a weight of the
wrong precision, a graph run on wrong or float64 inputs, random inputs too large to draw.  Each ends in
one line from an ``EqsatError`` naming the argument and the fix, never a torch or Python traceback, and
nothing is silently rewired or cast."""

import numpy as np
import pytest
import torch

from rewrite import GraphBuilder
from rewrite.ir.errors import EqsatError, GraphError, InputError, UsageError
from rewrite.ir.graph import Value


def one_line(e: pytest.ExceptionInfo[BaseException], cls: type[EqsatError], *words: str) -> str:
    """The message of ``e``, after checking its class, that it is one line and names every word."""
    assert isinstance(e.value, cls), type(e.value)
    msg = str(e.value)
    assert "\n" not in msg, msg
    for w in words:
        assert w in msg, (w, msg)
    return msg


# ------------------------------------------------------------ 1. builder arguments checked up front


def test_bare_int_shape():
    with pytest.raises(EqsatError) as e:
        GraphBuilder().input("x", 5)
    one_line(e, UsageError, "'x'", "shape 5", "(5,)")


def test_string_shape_and_bad_name():
    with pytest.raises(EqsatError) as e:
        GraphBuilder().input("x", "8x16")
    one_line(e, UsageError, "'x'", "'8x16'", "sequence of ints")
    with pytest.raises(EqsatError) as e:
        GraphBuilder().input(3, (2,))  # type: ignore[arg-type]
    one_line(e, UsageError, "input name 3", "str")


def test_numpy_weight():
    with pytest.raises(EqsatError) as e:
        GraphBuilder().weight("w", np.ones(3))  # type: ignore[arg-type]
    one_line(e, UsageError, "'w'", "ndarray", "torch.from_numpy(w)")


def test_build_with_a_string_or_a_bare_value():
    b = GraphBuilder()
    y = b.relu(b.input("x", (2,)))
    with pytest.raises(EqsatError) as e:
        b.build(["x"])  # type: ignore[list-item]
    one_line(e, UsageError, "output 1", "'x'", "not a Value")
    with pytest.raises(EqsatError) as e:
        b.build(y)  # type: ignore[arg-type]
    one_line(e, UsageError, "list of Values", "build([y])")


def test_op_given_a_number():
    b = GraphBuilder()
    x = b.input("x", (2,))
    with pytest.raises(EqsatError) as e:
        b.add(x, 1.0)  # type: ignore[arg-type]
    one_line(e, UsageError, "op 'add'", "input 2", "1.0", "fill")
    with pytest.raises(EqsatError) as e:
        b.relu("x")  # type: ignore[arg-type]
    one_line(e, UsageError, "op 'relu'", "input 1", "'x'")


# ------------------------------------------------------------ 2. another builder's value


def test_value_from_another_builder_is_refused():
    a, b = GraphBuilder("a"), GraphBuilder("b")
    x = a.input("x", (2, 3))
    b.input("y", (2, 3))  # node 0 of b: what x would silently have meant
    with pytest.raises(EqsatError) as e:
        b.relu(x)
    one_line(e, GraphError, "op 'relu'", str(x), "'a'", "'b'", "own builder")
    with pytest.raises(EqsatError) as e:
        b.add(b.input("z", (2, 3)), x)
    one_line(e, GraphError, "op 'add'", "input 2", str(x))
    with pytest.raises(EqsatError) as e:
        b.build([x])
    one_line(e, GraphError, "output 1", str(x), "'a'")
    with pytest.raises(EqsatError) as e:
        b.shape(x)
    one_line(e, GraphError, str(x), "'a'")


def test_owner_tag_leaves_equality_and_hashing_alone():
    a, b = GraphBuilder("a"), GraphBuilder("b")
    x, y = a.input("x", (2,)), b.input("y", (2,))
    assert x == y == Value(0, 0) and hash(x) == hash(Value(0, 0)) and {x: 1}[Value(0)] == 1
    assert repr(x) == "Value(node=0, index=0)" and sorted([Value(1), x]) == [x, Value(1)]
    g = b.build([b.relu(Value(0, 0))])  # a value made directly is not checked for an owner
    assert len(g.nodes) == 2


# ------------------------------------------------------------ 3. weights are never cast


def test_float64_weight_refused_with_the_cast_to_write():
    b = GraphBuilder()
    w = torch.ones(3, dtype=torch.float64)
    with pytest.raises(EqsatError) as e:
        b.weight("w", w)
    one_line(e, GraphError, "'w'", "torch.float64", "w.float()")
    assert "w" not in b.graph.weights and not b.graph.nodes
    v = b.weight("w", w.float())
    assert b.graph.weights["w"].dtype == torch.float32 and b.graph.dtype_of(v) == "float32"
    with pytest.raises(EqsatError) as e:
        b.weight("i", torch.ones(3, dtype=torch.int16))
    one_line(e, GraphError, "'i'", "torch.int16", "w.long()")


def test_torch_import_still_stores_float64_tables_as_float32():
    """The importer rounds its own float64 tables on purpose (``ImportState.weight``)."""
    from rewrite.frontends.aten_state import ImportState

    st = ImportState("m")
    v = st.weight("t", torch.full((2,), 1 / 3, dtype=torch.float64))
    assert st.b.graph.weights["t"].dtype == torch.float32 and st.b.graph.dtype_of(v) == "float32"


# ------------------------------------------------------------ 4. running: float64 references, wrong inputs


def _conv_net() -> GraphBuilder:
    gen = torch.Generator().manual_seed(0)
    b = GraphBuilder("net")
    im = b.input("im", (1, 3, 8, 8))
    c = b.conv2d(im, b.weight("cw", torch.randn(4, 3, 3, 3, generator=gen)), padding=(1, 1))
    c = b.add(c, b.weight("cb", torch.randn(1, 4, 1, 1, generator=gen)))
    flat = b.reshape(b.relu(c), shape=(4, 64))
    y = b.add(b.matmul(flat, b.weight("w", torch.randn(64, 5, generator=gen))), b.weight("b", torch.randn(5)))
    b.build([b.smul(y, scalar=1 / 3)])
    return b


def test_float64_run_promotes_weights():
    g = _conv_net().graph
    x = g.random_inputs()["im"]
    (y32,) = g.run({"im": x})
    (y64,) = g.run({"im": x.double()})
    assert y32.dtype == torch.float32 and y64.dtype == torch.float64
    assert torch.allclose(y64.float(), y32, rtol=1e-4, atol=1e-4)
    assert all(w.dtype == torch.float32 for w in g.weights.values())  # the graph is left as it was


def test_wrong_input_count_names_shapes_dtypes():
    b = GraphBuilder("g")
    x, i = b.input("x", (2, 3)), b.input("i", (2,), dtype="int64")
    g = b.build([b.relu(x), i])
    ok = {"x": torch.ones(2, 3), "i": torch.zeros(2, dtype=torch.int64)}
    cases = [
        ([torch.ones(2, 3)], ["graph 'g'", "2 input(s)", "['x', 'i']", "got 1"]),
        ({"x": ok["x"]}, ["no tensor given", "['i']"]),
        ({**ok, "X": ok["x"]}, ["no input ['X']"]),
        (ok["x"], ["got Tensor", "list", "dict"]),
        (None, ["got NoneType"]),
        ({**ok, "x": np.ones((2, 3), np.float32)}, ["input 'x'", "ndarray", "torch.from_numpy"]),
        ({**ok, "x": torch.ones(3, 2)}, ["input 'x'", "(3, 2)", "expected (2, 3)"]),
        ({**ok, "x": torch.ones(2, 3, dtype=torch.float16)}, ["input 'x'", "torch.float16", ".float()"]),
        ({**ok, "i": torch.zeros(2, dtype=torch.int32)}, ["input 'i'", "torch.int32", ".long()"]),
    ]
    for given, words in cases:
        with pytest.raises(EqsatError) as e:
            g.run(given)  # type: ignore[arg-type]
        one_line(e, InputError, *words)
    assert [t.shape for t in g.run(ok)] == [(2, 3), (2,)]
    assert g.run([ok["x"], ok["i"]])[1].dtype == torch.int64


# ------------------------------------------------------------ 5. random inputs too large to draw


def test_huge_random_inputs_refused_before_allocating():
    b = GraphBuilder("big")
    x = b.input("x", (1, 3, 100000, 100000))
    g = b.build([b.relu(x)])
    with pytest.raises(EqsatError) as e:
        g.random_inputs()  # 120 GB: would be killed, not refused, if it allocated first
    one_line(e, InputError, "'x'", "(1, 3, 100000, 100000)", "120.0 GB", "4 GiB", "max_bytes")


def test_input_bound_can_be_given():
    b = GraphBuilder("small")
    b.build([b.relu(b.input("x", (4, 4))), b.relu(b.input("y", (8, 4)))])
    g = b.graph
    assert set(g.random_inputs()) == {"x", "y"}
    with pytest.raises(EqsatError) as e:
        g.random_inputs(max_bytes=100)
    one_line(e, InputError, "'y'", "(8, 4)", "128 bytes", "all inputs 192 bytes", "100 bytes")
