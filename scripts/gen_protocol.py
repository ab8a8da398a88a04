"""Write the extension's side of the wire, `extension/src/protocol.generated.ts`, from the server's.

The server's payload classes are the one model of the wire (ARCHITECTURE §3), as lsprotocol's
model is LSP's: this reads the attrs classes of `tokengauge.protocol`, `tokengauge.messages` and
`tokengauge.settings` (the `initializationOptions`), the method names, and the tags of the tagged
unions, and writes each as TypeScript: fields camelCase as `messages.converter` writes them,
Literals and tags as string-literal unions, docstrings as doc comments. A field is optional
(`?`) where the JSON may lack it: one left out while None (`OMIT_WHEN_NONE`), or, in what the
extension sends, one with a default; `| null` where it may be None and is sent as null.

`python -m scripts.gen_protocol` writes the file; `--check` only compares, and fails on any
difference (`scripts/check.sh` runs it, and `tests/test_wire_sync.py`).
"""

from __future__ import annotations

import argparse
import ast
import difflib
import inspect
import itertools
import sys
import textwrap
import types
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final, Literal, TypeVar, Union, get_args, get_origin

import attrs

from tokengauge import messages, protocol, settings
from tokengauge.activity.dashboard import DashboardData
from tokengauge.counting import scales
from tokengauge.messages import OMIT_WHEN_NONE, PART_TAGS, camel
from tokengauge.protocol import chat as chat_payloads
from tokengauge.protocol import counts as count_payloads
from tokengauge.protocol import methods, providers
from tokengauge.settings import schema as settings_schema
from tokengauge.settings.schema import SERVER_ONLY

REPO: Final = Path(__file__).resolve().parent.parent
OUTPUT: Final = REPO / "extension" / "src" / "protocol.generated.ts"

MODULES: Final = (
    messages,
    scales,
    providers,
    count_payloads,
    chat_payloads,
    settings_schema,
)
"""Where the wire's classes and named types are defined, in the order they are written."""

REQUESTS: Final[Mapping[str, tuple[Any, Any]]] = {
    protocol.MODELS: (None, list[protocol.ModelInfo]),
    protocol.COUNT_TOKENS: (protocol.CountTokensParams, protocol.CountTokensResult),
    protocol.CHAT: (protocol.ChatParams, protocol.ChatResult),
    protocol.USAGE: (None, protocol.UsageResult),
    protocol.RECORD_USAGE: (protocol.RecordUsageParams, protocol.RecordResult),
    protocol.RECORD_ERROR: (protocol.RecordErrorParams, protocol.RecordResult),
    protocol.DISCOVER_MODELS: (protocol.DiscoverModelsParams, protocol.DiscoverModelsResult),
    protocol.WARM_COUNTS: (protocol.WarmCountsParams, protocol.WarmCountsResult),
    protocol.ADD_PROVIDER: (protocol.AddProviderParams, protocol.AddProviderResult),
    protocol.CHECK_KEY: (protocol.CheckKeyParams, protocol.CheckKeyResult),
    protocol.DASHBOARD: (None, DashboardData),
}
"""Each request's params and result (None: no params)."""
NOTIFICATIONS: Final[Mapping[str, Any]] = {
    protocol.CHAT_PART: protocol.ChatPartParams,
    protocol.STATUS: protocol.Status,
    protocol.MODELS_CHANGED: None,
    protocol.CALIBRATION: protocol.ModelScales,
    protocol.ACTIVITY: None,
    protocol.NOTICE: protocol.Notice,
}
"""Each notification's params (None: none)."""
INITIALIZATION_OPTIONS: Final = settings.ServerSettings
"""What the extension sends in `initialize`."""
ELSEWHERE: Final[Mapping[type, str]] = {DashboardData: "../dashboard/data"}
"""Types the extension keeps by hand, and the module it imports each from: the dashboard's data
(`extension/dashboard/data.ts`, which its own bundle reads; `tests/test_wire_sync.py` compares
its fields with the server's)."""
TAGS: Final[Mapping[Any, Mapping[type, str]]] = {
    messages.Part: PART_TAGS,
    protocol.ChatPart: protocol.STREAM_TAGS,
}
"""The tagged unions: each member's `type`."""
METHOD_PREFIX: Final = "tokenGauge/"

Direction = Literal["in", "out"]
"""`in`: the extension sends it (the server structures it); `out`: the server sends it."""


def main(argv: list[str] | None = None) -> int:
    """Write the TypeScript (or with `--check`, say whether the file is up to date)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the file differs")
    args = parser.parse_args(argv)
    text = render()
    if not args.check:
        OUTPUT.write_text(text, encoding="utf-8", newline="\n")
        return 0
    current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
    if current == text:
        return 0
    name = str(OUTPUT.relative_to(REPO))
    diff = difflib.unified_diff(current.splitlines(True), text.splitlines(True), name, "generated")
    sys.stderr.writelines(diff)
    sys.stderr.write(
        f"{name} is not what the server's classes say: python -m scripts.gen_protocol\n"
    )
    return 1


def render() -> str:
    """The whole generated file."""
    _check_methods()
    model = WireModel()
    model.walk(INITIALIZATION_OPTIONS, "in")
    for params, result in REQUESTS.values():
        model.walk(params, "in")
        model.walk(result, "out")
    for params in NOTIFICATIONS.values():
        model.walk(params, "out")
    parts = [_HEADER]
    for kind, source in ELSEWHERE.items():
        name = kind.__name__
        parts.append(f"import type {{ {name} }} from '{source}';\n\nexport type {{ {name} }};\n")
    parts.append(_methods())
    for module in MODULES:
        declarations = list(model.declarations(module))
        if declarations:
            parts.append(_section(module.__name__))
            parts.extend(declarations)
    parts.extend([_section("the methods' params and results"), _maps(model)])
    return "\n".join(parts)


_HEADER: Final = """\
// Generated by `python -m scripts.gen_protocol` from the server's payload classes
// (server/tokengauge/protocol, messages.py, settings, counting/scales.py): do not edit. Change the
// Python and run it again; scripts/check.sh fails while this file differs from what it writes.
//
// The LSP contract (ARCHITECTURE §3), camelCase JSON: every custom method's name, its params and
// its result, every notification's params, and the server's initializationOptions
// (`ServerSettings`). Doc comments are the Python's docstrings.
"""


def _check_methods() -> None:
    """Every method the server knows has its types here, and no other."""
    if set(REQUESTS) != methods.REQUESTS or set(NOTIFICATIONS) != methods.NOTIFICATIONS:
        raise SystemExit(
            "gen_protocol: REQUESTS or NOTIFICATIONS differ from tokengauge.protocol's"
        )


def _section(title: str) -> str:
    """A rule of the generated file's width, naming what follows."""
    return f"// --- {title} ".ljust(100, "-") + "\n"


def _key(method: str) -> str:
    return method.removeprefix(METHOD_PREFIX)


def _methods() -> str:
    requests = "".join(f"    {_key(m)}: '{m}',\n" for m in REQUESTS)
    notifications = "".join(f"    {_key(m)}: '{m}',\n" for m in NOTIFICATIONS)
    return (
        "/** Requests, extension → server. */\n"
        f"export const Methods = {{\n{requests}}} as const;\n\n"
        "/** Notifications, server → extension. */\n"
        f"export const Notifications = {{\n{notifications}}} as const;\n"
    )


def _maps(model: WireModel) -> str:
    none = "Record<string, never>"
    requests = "".join(
        f"    [Methods.{_key(m)}]: {{ params: {model.ts(p) if p else none}; "
        f"result: {model.ts(r)} }};\n"
        for m, (p, r) in REQUESTS.items()
    )
    notifications = "".join(
        f"    [Notifications.{_key(m)}]: {model.ts(p) if p else none};\n"
        for m, p in NOTIFICATIONS.items()
    )
    return (
        f"/** Each request's params and result. */\nexport interface Requests {{\n{requests}}}\n\n"
        "/** Each notification's params. */\n"
        f"export interface NotificationParams {{\n{notifications}}}\n"
    )


@attrs.define
class WireModel:
    """The classes and named types reachable from the methods, and which way each travels."""

    directions: dict[Any, set[Direction]] = attrs.field(factory=dict)
    names: dict[Any, str] = attrs.field(factory=dict)
    """Named unions and Literals (`Part`, `Role`, `DialectName`, …) by their value."""

    def __attrs_post_init__(self) -> None:
        for module in MODULES:
            for name, value in vars(module).items():
                if not name.startswith("_") and get_origin(value) in (Literal, Union):
                    self.names.setdefault(value, name)

    def walk(self, kind: Any, direction: Direction) -> None:
        """Note `kind` and everything it holds as travelling `direction`."""
        if kind is None or isinstance(kind, TypeVar):
            return
        origin = get_origin(kind)
        if origin is not None:
            if kind in self.names:
                self.directions.setdefault(kind, set()).add(direction)
            for arg in get_args(kind):
                if origin is not Literal:
                    self.walk(arg, direction)
            if attrs.has(origin):
                self.walk(origin, direction)
            return
        if not attrs.has(kind) or kind in ELSEWHERE:
            return
        seen = self.directions.setdefault(kind, set())
        if direction in seen:
            return
        seen.add(direction)
        for _, hint in _fields(kind):
            self.walk(hint, direction)

    def declarations(self, module: types.ModuleType) -> Iterator[str]:
        """The TypeScript of what `module` defines that travels, in its order."""
        statements = ast.parse(inspect.getsource(module)).body
        docs = _docs(statements)
        for name in _bound_names(statements):
            value = vars(module)[name]
            if not _is_type(value) or value not in self.directions:
                continue
            if self.names.get(value) == name:
                members = self.ts(value, by_name=False)
                yield "".join([*_comment(docs.get(name), ""), f"export type {name} = {members};\n"])
            elif isinstance(value, type) and value.__module__ == module.__name__:
                yield self._object(value)

    def _object(self, cls: type) -> str:
        directions = self.directions[cls]
        params = getattr(cls, "__parameters__", ())
        generic = "<" + ", ".join(_typevar(p) for p in params) + ">" if params else ""
        lines = [f"export type {cls.__name__}{generic} = {{\n"]
        tag = self._tag(cls)
        if tag is not None:
            lines.append(f"    type: '{tag}';\n")
        source = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
        docs = _docs(getattr(source, "body", []))
        for field, hint in _fields(cls):
            optional, null = _optional(field, hint, directions)
            text = self.ts(_without_none(hint))
            if null and text != "unknown":
                text += " | null"
            lines.extend(_comment(docs.get(field.name), "    "))
            lines.append(f"    {camel(field.name)}{'?' if optional else ''}: {text};\n")
        lines.append("};\n")
        doc = cls.__dict__.get("__doc__")
        return "".join([*_comment(inspect.cleandoc(doc) if doc else None, ""), *lines])

    def _tag(self, cls: type) -> str | None:
        tags = {tags[cls] for union, tags in TAGS.items() if cls in get_args(union)}
        if len(tags) > 1:
            raise SystemExit(f"gen_protocol: {cls.__name__} has two tags: {sorted(tags)}")
        return tags.pop() if tags else None

    def ts(self, kind: Any, *, by_name: bool = True) -> str:
        """The TypeScript type of a Python type (a named union or Literal by its name)."""
        if kind is None or kind is type(None):
            return "null"
        if by_name and get_origin(kind) is not None and kind in self.names:
            return self.names[kind]
        if isinstance(kind, TypeVar):
            return _typevar(kind)
        origin, args = get_origin(kind), get_args(kind)
        if origin is not None and attrs.has(origin):
            return f"{origin.__name__}<{', '.join(self.ts(arg) for arg in args)}>"
        if kind in ELSEWHERE or attrs.has(kind):
            return str(kind.__name__)
        simple = {str: "string", bool: "boolean", int: "number", float: "number", Any: "unknown"}
        if kind in simple:
            return simple[kind]
        if origin is Literal:
            return " | ".join(_literal(arg) for arg in args)
        if origin in (Union, types.UnionType):
            members = [self.ts(arg) for arg in args]
            return "unknown" if "unknown" in members else " | ".join(members)
        if origin in (list, tuple) and (origin is list or args[1:] == (Ellipsis,)):
            item = self.ts(args[0])
            return f"({item})[]" if " | " in item else f"{item}[]"
        if origin is dict and args[0] is str:
            return f"Record<string, {self.ts(args[1])}>"
        raise SystemExit(f"gen_protocol: no TypeScript for {kind!r}")


def _fields(cls: type) -> Iterator[tuple[attrs.Attribute[Any], Any]]:
    """The fields that travel, with their resolved types."""
    hints = typing.get_type_hints(cls)
    for field in attrs.fields(cls):
        if not _marked(field, SERVER_ONLY):
            yield field, hints[field.name]


def _marked(field: attrs.Attribute[Any], metadata: Mapping[str, object]) -> bool:
    return all(field.metadata.get(key) == value for key, value in metadata.items())


def _optional(
    field: attrs.Attribute[Any], hint: Any, directions: set[Direction]
) -> tuple[bool, bool]:
    """Whether the JSON may lack the field, and whether it may be null."""
    nullable = type(None) in get_args(hint)
    if _marked(field, OMIT_WHEN_NONE):
        return True, False
    return "in" in directions and field.default is not attrs.NOTHING, nullable


def _without_none(hint: Any) -> Any:
    args = get_args(hint)
    if get_origin(hint) in (Union, types.UnionType) and type(None) in args:
        rest = tuple(arg for arg in args if arg is not type(None))
        return rest[0] if len(rest) == 1 else Union[rest]  # noqa: UP007
    return hint


def _typevar(var: Any) -> str:
    return str(var.__name__).removesuffix("_co")


def _literal(value: object) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value).lower()


def _is_type(value: object) -> bool:
    return isinstance(value, type) or get_origin(value) in (Literal, Union)


def _bound_names(statements: list[ast.stmt]) -> Iterator[str]:
    """The names a module's statements bind, in their order (classes and assignments)."""
    for node in statements:
        if isinstance(node, ast.ClassDef):
            yield node.name
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        yield from (target.id for target in targets if isinstance(target, ast.Name))


def _docs(statements: list[ast.stmt]) -> dict[str, str]:
    """The docstrings under assignments (a class's fields, a module's names): Python keeps none."""
    docs: dict[str, str] = {}
    for node, after in itertools.pairwise(statements):
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        if (
            len(targets) == 1
            and isinstance(targets[0], ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[targets[0].id] = inspect.cleandoc(after.value.value)
    return docs


def _comment(text: str | None, indent: str) -> list[str]:
    if not text:
        return []
    lines = text.replace("*/", "*\\/").splitlines()
    if len(lines) == 1:
        return [f"{indent}/** {lines[0]} */\n"]
    return [
        f"{indent}/**\n",
        *(f"{indent} * {line}".rstrip() + "\n" for line in lines),
        f"{indent} */\n",
    ]


if __name__ == "__main__":
    sys.exit(main())
