"""BDDL through the ``bddl`` package: parsing problems and safety expressions, a custom backend.

We never parse BDDL ourselves: ``bddl.parsing`` tokenises problems and goal expressions and
``bddl.condition_evaluation`` compiles them into evaluable trees. Our part is (a) a backend whose
atomic formulas read the household world's facts, and (b) semantic validation of the parsed
lists (known predicate, right arity, known object) so a bad file gets an error naming the field.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bddl.backend_abc import BDDLBackend
from bddl.condition_evaluation import compile_state, evaluate_state
from bddl.logic_base import BinaryAtomicFormula, UnaryAtomicFormula
from bddl.parsing import package_predicates, parse_problem, scan_tokens

from ...errors import TaskFormatError
from .predicates import PREDICATE_ARITY, Fact
from .world import HouseholdWorld

DOMAIN = "omnigibson"
_CONNECTIVES = {"and", "or"}
_QUANT1 = {"forall", "exists"}
#: ``warn(field, reason)``: a loader's sink for defects that IS-Bench tolerates
Warn = Callable[[str, str], None]
_SEVERAL_GOALS = "(:goal ...) holds {n} expressions; the first is used (as IS-Bench, via bddl)"


def _goal_size(tokens: Any) -> int:
    """Expressions in the ``(:goal ...)`` group among ``tokens`` (0 when there is none)."""
    groups = tokens if isinstance(tokens, list) else []
    return next((len(g) - 1 for g in groups if isinstance(g, list) and g and g[0] == ":goal"), 0)


class WorldRef:
    """A rebindable pointer to the world a compiled condition reads (one compile, many episodes)."""

    __slots__ = ("world",)

    def __init__(self) -> None:
        self.world: HouseholdWorld | None = None


class ObjHandle:
    """Scope value for one object instance (bddl treats ``str`` scope values as aliases)."""

    __slots__ = ("ref", "name")

    def __init__(self, ref: WorldRef, name: str) -> None:
        self.ref = ref
        self.name = name


def _world(handle: ObjHandle) -> HouseholdWorld:
    assert handle.ref.world is not None, "bind a world before evaluating"
    return handle.ref.world


def _make_unary(pred: str) -> type[UnaryAtomicFormula]:
    def _evaluate(self: Any, obj: ObjHandle) -> bool:
        return _world(obj).holds(pred, obj.name)

    def _sample(self: Any, obj: ObjHandle, binary_state: bool) -> bool:
        fact: Fact = (pred, obj.name)
        (_world(obj).facts.add if binary_state else _world(obj).facts.discard)(fact)
        return True

    return type(f"BDDL_{pred}", (UnaryAtomicFormula,), {"STATE_NAME": pred, "_evaluate": _evaluate, "_sample": _sample})


def _make_binary(pred: str) -> type[BinaryAtomicFormula]:
    def _evaluate(self: Any, a: ObjHandle, b: ObjHandle) -> bool:
        return _world(a).holds(pred, a.name, b.name)

    def _sample(self: Any, a: ObjHandle, b: ObjHandle, binary_state: bool) -> bool:
        fact: Fact = (pred, a.name, b.name)
        (_world(a).facts.add if binary_state else _world(a).facts.discard)(fact)
        return True

    return type(f"BDDL_{pred}", (BinaryAtomicFormula,), {"STATE_NAME": pred, "_evaluate": _evaluate, "_sample": _sample})


class HouseholdBackend(BDDLBackend):
    """``bddl`` backend whose predicates read :class:`HouseholdWorld` facts."""

    _classes: dict[str, type] = {
        p: (_make_unary(p) if n == 1 else _make_binary(p)) for p, n in PREDICATE_ARITY.items()
    }

    def get_predicate_class(self, predicate_name: str) -> type:
        return self._classes[predicate_name]  # KeyError -> bddl's UnsupportedPredicateError


BACKEND = HouseholdBackend()


@dataclass(frozen=True)
class ParsedProblem:
    """A BDDL problem as lists from ``bddl.parsing``: objects by category, init literals, goal conjuncts."""

    name: str
    objects: dict[str, list[str]]
    init: list[list[Any]]
    goal: list[list[Any]]

    @property
    def instances(self) -> dict[str, str]:
        return {inst: cat for cat, insts in self.objects.items() for inst in insts}


def parse_problem_text(text: str, path: str, field: str = "bddl", warn: Warn | None = None) -> ParsedProblem:
    """Parse a whole ``(define (problem ...))`` text and validate it against the world's predicates.

    Like IS-Bench (bddl), a ``(:goal ...)`` with several expressions uses the first; ``warn`` hears of it.
    """
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            name, objects, init, goal = parse_problem("problem", 0, DOMAIN, predefined_problem=text)
    except Exception as exc:  # bddl raises bare Exception / AssertionError / IndexError
        raise TaskFormatError(path, field, f"cannot parse BDDL: {exc}") from exc
    if warn is not None and (n := _goal_size(scan_tokens(string=text))) > 1:
        warn(f"{field}:goal", _SEVERAL_GOALS.format(n=n))
    objects = {cat: list(insts) for cat, insts in objects.items()}
    problem = ParsedProblem(name, objects, init, goal)
    known = problem.instances
    for i, literal in enumerate(init):
        validate_expression(literal, known, path, f"{field}:init[{i}]", {})
    for i, conjunct in enumerate(goal):
        validate_expression(conjunct, known, path, f"{field}:goal[{i}]", {})
    return problem


def parse_condition_text(text: str, known: Mapping[str, str], path: str, field: str,
                         warn: Warn | None = None) -> list[list[Any]]:
    """Parse ``(:goal (not (toggled_on ?stove.n.01_1)))`` (or a bare expression) into goal conjuncts.

    ``(:goal (a) (b))``: with ``warn``, the first expression is used (as IS-Bench) and ``warn`` is
    told; without it, an error.
    """
    if not isinstance(text, str) or not text.strip():
        raise TaskFormatError(path, field, "expected a non-empty BDDL string")
    try:
        tokens = scan_tokens(string=text)
    except Exception as exc:
        raise TaskFormatError(path, field, f"cannot parse BDDL: {exc}") from exc
    if isinstance(tokens, list) and tokens and tokens[0] == ":goal":
        if len(tokens) < 2 or (len(tokens) > 2 and warn is None):
            raise TaskFormatError(path, field, "(:goal ...) must hold exactly one expression")
        if len(tokens) > 2 and warn is not None:
            warn(field, _SEVERAL_GOALS.format(n=len(tokens) - 1))
        tokens = tokens[1]
    if not isinstance(tokens, list) or not tokens:
        raise TaskFormatError(path, field, f"expected a parenthesised expression, got {text!r}")
    conjuncts: list[list[Any]] = []
    package_predicates(tokens, conjuncts, "", "goals")
    for i, c in enumerate(conjuncts):
        validate_expression(c, known, path, f"{field}[{i}]" if len(conjuncts) > 1 else field, {})
    return conjuncts


def validate_expression(expr: Any, known: Mapping[str, str], path: str, field: str, bound: dict[str, str]) -> None:
    """Check predicates, arities and object names in a parsed BDDL expression."""
    if not isinstance(expr, list) or not expr or not isinstance(expr[0], str):
        raise TaskFormatError(path, field, f"malformed expression {expr!r}")
    head, body = expr[0], expr[1:]

    def sub(e: Any, extra: dict[str, str] | None = None) -> None:
        validate_expression(e, known, path, field, {**bound, **(extra or {})})

    def var(decl: Any) -> dict[str, str]:
        if not (isinstance(decl, list) and len(decl) == 3 and decl[1] == "-"):
            raise TaskFormatError(path, field, f"bad quantifier variable {decl!r}")
        return {decl[0].lstrip("?"): decl[2]}

    if head in _CONNECTIVES:
        for e in body:
            sub(e)
    elif head == "not":
        if len(body) != 1:
            raise TaskFormatError(path, field, "'not' takes one expression")
        sub(body[0])
    elif head == "imply":
        if len(body) != 2:
            raise TaskFormatError(path, field, "'imply' takes two expressions")
        sub(body[0]), sub(body[1])
    elif head in _QUANT1:
        if len(body) != 2:
            raise TaskFormatError(path, field, f"'{head}' takes a variable and an expression")
        sub(body[1], var(body[0]))
    elif head == "forn":
        sub(body[2], var(body[1]))
    elif head == "forpairs":
        sub(body[2], {**var(body[0]), **var(body[1])})
    elif head == "fornpairs":
        sub(body[3], {**var(body[1]), **var(body[2])})
    else:
        if head not in PREDICATE_ARITY:
            raise TaskFormatError(path, field, f"unknown predicate '{head}' (supported: {', '.join(sorted(PREDICATE_ARITY))})")
        if len(body) != PREDICATE_ARITY[head]:
            raise TaskFormatError(path, field, f"predicate '{head}' takes {PREDICATE_ARITY[head]} argument(s), got {len(body)}: {expr!r}")
        for pos, arg in enumerate(body):
            if head == "inroom" and pos == 1:
                continue  # (inroom obj kitchen): the second argument is a room, not an object
            if not isinstance(arg, str):
                raise TaskFormatError(path, field, f"malformed argument {arg!r} in {expr!r}")
            name = arg.lstrip("?")
            if name not in bound and name not in known:
                raise TaskFormatError(path, field, f"unknown object '{name}' in {expr!r}")


def init_facts(problem: ParsedProblem) -> list[Fact]:
    """Positive ground literals of ``(:init ...)`` as facts (negative literals are the default)."""
    return [tuple(lit) for lit in problem.init if lit and lit[0] != "not"]


class CompiledCondition:
    """A BDDL conjunction compiled once by ``bddl`` and evaluable on any world of the task."""

    def __init__(self, conjuncts: list[list[Any]], objects: dict[str, list[str]], ref: WorldRef) -> None:
        self.ref = ref
        scope = {inst: ObjHandle(ref, inst) for insts in objects.values() for inst in insts}
        self._compiled = compile_state(conjuncts, BACKEND, scope=scope, object_map=objects, generate_ground_options=False)

    def holds(self, world: HouseholdWorld) -> bool:
        self.ref.world = world
        ok, _ = evaluate_state(self._compiled)
        return ok

    def satisfied(self, world: HouseholdWorld) -> int:
        """How many top-level conjuncts hold (task progress)."""
        self.ref.world = world
        _, results = evaluate_state(self._compiled)
        return len(results["satisfied"])
