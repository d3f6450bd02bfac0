"""``python -m benchmarks vocabulary``: the cost and accuracy of the cavity solver of the model's bulk."""
from benchmarks import vocabulary
from derive.numbers import check_count

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "vocabulary"
HELP = "time the cavity solver of the model's bulk on 200 points (2 threads against 1) and its accuracy"


def add_arguments(p):
    p.add_argument("--points", default="200", help="points per case, at least 10 (default 200; a tenth of them also on one thread)")
    p.add_argument("--out", help="write the markdown table there")


def run(args):
    return vocabulary.bench(check_count(args.points, "points", low=10), args.out)


def render(doc) -> str:
    return doc["markdown"]
