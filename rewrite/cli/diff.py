"""``eqsat diff A B``: a structural diff of two graphs, as text (``rewrite.diff``).

eqsat diff bert optimized.eqsat
eqsat diff model.onnx model_opt.onnx --regions 5
"""

from __future__ import annotations

from rewrite.cli.args import positive_int
from rewrite.cli.main import Parser
from rewrite.cli.sources import check_model_spec, read_source
from rewrite.ir.diff import diff


def main(argv: list[str], prog: str = "eqsat diff") -> int:
    p = Parser(prog=prog, description="Structural diff of two graphs (before -> after).")
    p.add_argument("a", help="model name, FILE.py:FACTORY, .onnx file or saved graph (.eqsat)")
    p.add_argument("b", help="the same kinds")
    p.add_argument("--regions", type=positive_int, default=50, help="most regions to print")
    args = p.parse_args(argv)
    check_model_spec(args.a)  # both checked before either is loaded
    check_model_spec(args.b)
    a, b = read_source(args.a).graph, read_source(args.b).graph
    print(diff(a, b).text(max_regions=args.regions))
    return 0
