"""A deterministic, Copilot-sized chat request (ARCHITECTURE §3 shape) for the benchmarks.

`build_workload()` returns one system message of instructions (~2.5k tokens), 100 messages of
mixed content (English prose, Python and TypeScript code, Japanese and Chinese text, JSON, stack
traces, tool calls and tool results, some of them 5-20 KB files) and 60 tools with JSON schemas,
all drawn from a seeded `random.Random`: the same seed gives the same request, byte for byte.

`Workload.copilot_strings()` lists what Copilot Chat counts one call at a time: each key and
string value of every tool (as its `countObjectTokens` walks `{name, description, parameters}`),
then every text chunk of the messages.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from typing import Any, Final

import attrs

from tokengauge.messages import (
    Message,
    Part,
    TextPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
    unstructure,
)

SEED: Final = 20_250_214
MESSAGE_COUNT: Final = 100
TOOL_COUNT: Final = 60
LONG_FILE_SHARE: Final = 0.7
"""Share of `read_file` results that are whole files of 5-20 KB."""

# --- vocabulary ---------------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


NOUNS: Final = _words(
    "config parser session request response token cache ledger buffer handler router schema "
    "payload stream worker queue index model client server message budget factor limit window "
    "digest encoder"
)
VERBS: Final = _words(
    "parse load build count render flush read write merge split resolve validate encode "
    "decode fetch store update compute check"
)
ADJECTIVES: Final = _words(
    "empty stale missing invalid large nested cached closed pending malformed duplicated "
    "truncated unbounded concurrent optional"
)
SENTENCES: Final = (
    "The {n} in `{i}` fails when the {n2} is {a}.",
    "Could you {v} the {n} before we {v2} the {n2}?",
    "I ran the tests again and `{i}` still raises when the {n} is {a}.",
    "Let me {v} the {n} first, then I will check how `{i}` handles a {a} {n2}.",
    "This happens because `{i}` assumes the {n} is never {a}, but the {n2} can be.",
    "We should {v} the {n} lazily; doing it on every {n2} is too slow.",
    "The fix is to {v} the {n} once and keep it in the {n2} instead of recomputing it.",
    "After the change, `{i}` returns early for a {a} {n}, so the {n2} is left untouched.",
    "Please keep the public API of `{i}` unchanged, other modules import it.",
    "I updated `{i}` so that a {a} {n} no longer breaks the {n2}.",
    "Here is what I found while reading the {n} module and its tests.",
    "The error message comes from `{i}`, which is called by the {n2} on startup.",
    "If the {n} is {a}, we log a warning and fall back to the default {n2}.",
    "Now the {n2} is only rebuilt when the {n} actually changes.",
    "That looks right, but what about a {a} {n} coming from the {n2}?",
)
JAPANESE: Final = (
    "設定ファイルが空の場合、パーサーが例外を投げてしまいます。",
    "この関数はキャッシュを使わずに毎回トークンを数えているので遅いです。",
    "テストを追加して、境界値の動作を確認してください。",
    "エラーメッセージをもっと分かりやすくしたいと思います。",
    "非同期処理の途中でキャンセルされた場合の挙動が不明です。",
    "ログにはAPIキーを絶対に出力しないでください。",
    "リクエストが長すぎると、サーバーが「プロンプトが長すぎます」と返します。",
    "型ヒントを追加して、mypyのエラーをすべて修正しました。",
)
CHINESE: Final = (
    "当配置文件为空时，解析器会抛出异常。",
    "这个函数每次都重新计算令牌数量，没有使用缓存，所以很慢。",
    "请添加单元测试来覆盖边界情况。",
    "我们需要在上下文窗口用完之前压缩对话历史。",
    "服务器返回了一个错误：输入的令牌数量超过了模型的最大限制。",
    "请不要修改公共接口，其他模块依赖它。",
    "日志中不能出现任何密钥或者用户的私人信息。",
    "这个补丁修复了并发写入缓存时的竞争条件。",
)
TYPES: Final = ("str", "int", "float", "bool", "bytes", "list[str]", "dict[str, int]", "None")
TS_TYPES: Final = ("string", "number", "boolean", "string[]", "Record<string, number>", "void")


def _ident(rng: random.Random) -> str:
    return f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}"


def _camel(rng: random.Random) -> str:
    return rng.choice(VERBS) + rng.choice(NOUNS).title() + rng.choice(("", "s", "Async", "ById"))


def prose(rng: random.Random, sentences: int) -> str:
    """A few English sentences about code."""
    return " ".join(
        rng.choice(SENTENCES).format(
            n=rng.choice(NOUNS),
            n2=rng.choice(NOUNS),
            a=rng.choice(ADJECTIVES),
            v=rng.choice(VERBS),
            v2=rng.choice(VERBS),
            i=_ident(rng),
        )
        for _ in range(sentences)
    )


def cjk_text(rng: random.Random, sentences: int) -> str:
    """Japanese or Chinese sentences."""
    pool = rng.choice((JAPANESE, CHINESE))
    return "".join(rng.choice(pool) for _ in range(sentences))


def _fill(rng: random.Random, size: int, block: Callable[[random.Random], str]) -> str:
    """Blocks until at least `size` characters."""
    out: list[str] = []
    length = 0
    while length < size:
        text = block(rng)
        out.append(text)
        length += len(text)
    return "".join(out)


def _python_block(rng: random.Random) -> str:
    name, var = _ident(rng), rng.choice(NOUNS)
    item = f"{var}_item"
    lines = [
        f"def {name}({var}: {rng.choice(TYPES)}, *, limit: int = {rng.randint(1, 9999)})"
        f" -> {rng.choice(TYPES)}:",
        f'    """{prose(rng, 1)}"""',
    ]
    for _ in range(rng.randint(2, 8)):
        lines += rng.choice(
            (
                [
                    f"    if {var} is None:",
                    f'        raise ValueError(f"{{{var}!r}} is {rng.choice(ADJECTIVES)}")',
                ],
                [f"    for {item} in {var}:", f"        result.append({item}.{_ident(rng)}())"],
                [f"    {var} = {_ident(rng)}({var}, limit=limit)"],
                [f'    log.debug("{rng.choice(VERBS)} %s ({rng.choice(NOUNS)})", {var})'],
                [
                    "    try:",
                    f"        {var} = json.loads({var})",
                    "    except ValueError:",
                    f"        {var} = {{}}",
                ],
            )
        )
    lines.append(f"    return {var}\n\n\n")
    if rng.random() < 0.25:
        cls = rng.choice(NOUNS).title() + rng.choice(NOUNS).title()
        doc = prose(rng, 1)
        lines.insert(0, f'class {cls}:\n    """{doc}"""\n\n    {_ident(rng)}: int = 0\n\n')
    return "\n".join(lines)


def _typescript_block(rng: random.Random) -> str:
    name, arg = _camel(rng), rng.choice(NOUNS)
    iface = rng.choice(NOUNS).title() + "Options"
    adjective, member = rng.choice(ADJECTIVES), _camel(rng)
    lines = [
        f"export interface {iface} {{",
        *(f"  {_camel(rng)}?: {rng.choice(TS_TYPES)};" for _ in range(rng.randint(2, 5))),
        "}",
        "",
        f"/** {prose(rng, 1)} */",
        f"export async function {name}({arg}: {rng.choice(TS_TYPES)}, options: {iface} = {{}})"
        f": Promise<{rng.choice(TS_TYPES)}> {{",
    ]
    for _ in range(rng.randint(2, 7)):
        lines += rng.choice(
            (
                [f"  const {_camel(rng)} = await this.{_camel(rng)}({arg}, options);"],
                [f"  if (!{arg}) {{", f"    throw new Error(`{arg} is {adjective}`);", "  }"],
                [
                    f"  for (const item of {arg}.{member}) {{",
                    f"    results.push(item.{member});",
                    "  }",
                ],
                [f"  logger.info('{rng.choice(VERBS)} {rng.choice(NOUNS)}', {{ {arg} }});"],
            )
        )
    lines.append(f"  return {arg};\n}}\n\n")
    return "\n".join(lines)


def python_source(rng: random.Random, size: int) -> str:
    """Python source of at least `size` characters."""
    header = "from __future__ import annotations\n\nimport json\nimport logging\n\n"
    return header + "log = logging.getLogger(__name__)\n\n\n" + _fill(rng, size, _python_block)


def typescript_source(rng: random.Random, size: int) -> str:
    """TypeScript source of at least `size` characters."""
    header = "import * as vscode from 'vscode';\nimport { logger } from './log';\n\n"
    return header + _fill(rng, size, _typescript_block)


def json_blob(rng: random.Random, depth: int) -> str:
    """A pretty-printed JSON document."""

    def value(level: int) -> Any:
        roll = rng.random()
        if level > 0 and roll < 0.3:
            return {_camel(rng): value(level - 1) for _ in range(rng.randint(2, 5))}
        if level > 0 and roll < 0.45:
            return [value(level - 1) for _ in range(rng.randint(1, 4))]
        if roll < 0.6:
            return rng.randint(0, 100_000)
        if roll < 0.7:
            return rng.random() < 0.5
        return rng.choice((prose(rng, 1), _ident(rng), f"/src/{_ident(rng)}.ts", cjk_text(rng, 1)))

    return json.dumps(
        {_camel(rng): value(depth) for _ in range(rng.randint(3, 7))}, indent=2, ensure_ascii=False
    )


def stack_trace(rng: random.Random) -> str:
    """A Python traceback or a Node.js stack."""
    if rng.random() < 0.5:
        frames = "".join(
            f'  File "/home/dev/project/src/{rng.choice(NOUNS)}.py", line {rng.randint(1, 900)},'
            f" in {_ident(rng)}\n    {_ident(rng)}({rng.choice(NOUNS)})\n"
            for _ in range(rng.randint(3, 12))
        )
        return (
            f"Traceback (most recent call last):\n{frames}"
            f"{rng.choice(('KeyError', 'ValueError', 'TypeError'))}: {prose(rng, 1)}"
        )
    frames = "".join(
        f"    at {rng.choice(NOUNS).title()}.{_camel(rng)} (/app/src/{rng.choice(NOUNS)}.ts:"
        f"{rng.randint(1, 500)}:{rng.randint(1, 80)})\n"
        for _ in range(rng.randint(4, 14))
    )
    return f"TypeError: Cannot read properties of undefined (reading '{_camel(rng)}')\n{frames}"


def terminal_output(rng: random.Random) -> str:
    """A pytest or npm run with failures."""
    passed = "".join(rng.choice(".....F.s") for _ in range(rng.randint(40, 300)))
    return (
        f"$ pytest -x -q\n{passed}\n=================== FAILURES ===================\n"
        f"___ test_{_ident(rng)} ___\n{stack_trace(rng)}\n"
        f"FAILED tests/test_{rng.choice(NOUNS)}.py::test_{_ident(rng)} - {prose(rng, 1)}\n"
        f"1 failed, {passed.count('.')} passed in {rng.uniform(0.5, 30):.2f}s\n"
    )


def grep_output(rng: random.Random, lines: int) -> str:
    """`path:line:text` matches."""
    return "\n".join(
        f"src/{rng.choice(NOUNS)}/{_ident(rng)}.py:{rng.randint(1, 999)}:"
        f"    {_ident(rng)} = {_ident(rng)}({rng.choice(NOUNS)})"
        for _ in range(lines)
    )


def listing(rng: random.Random) -> str:
    """A directory listing."""
    names = [f"{_ident(rng)}{rng.choice(('.py', '.ts', '.json', '/', '.md'))}" for _ in range(30)]
    return "\n".join(sorted(names))


SYSTEM_SECTIONS: Final = (
    (
        "instructions",
        "You are a highly sophisticated automated coding agent with expert-level "
        "knowledge across many different programming languages and frameworks. The user will ask a "
        "question, or ask you to perform a task, and it may require lots of research to answer "
        "correctly. There is a selection of tools that let you perform actions or retrieve helpful "
        "context to answer the user's question. If you can infer the project type (languages, "
        "frameworks, and libraries) from the user's query or the context you have, make sure to "
        "keep them in mind when making changes. Don't make assumptions about the situation; gather "
        "context first, then perform the task or answer the question.",
    ),
    (
        "toolUseInstructions",
        "When using a tool, follow the JSON schema very carefully and make "
        "sure to include ALL required properties. Always output valid JSON when using a tool. If a "
        "tool exists to do a task, use the tool instead of asking the user to manually take an "
        "action. If you say that you will take an action, then go ahead and use the tool to do it. "
        "Never say the name of a tool to a user. Don't call the terminal tool multiple times in "
        "parallel; run one command and wait for the output before running the next command.",
    ),
    (
        "editFileInstructions",
        "Don't try to edit an existing file without reading it first, so "
        "you can make changes properly. Use the replace tool to edit files, paying attention to "
        "context to ensure your replacement is unique. NEVER show the changes to the user; call "
        "the tool, and the edits will be applied and shown to the user. After editing a file, you "
        "MUST call get_errors to validate the change. Fix the errors if they are relevant.",
    ),
    (
        "outputFormatting",
        "Use proper Markdown formatting in your answers. When referring to a "
        "filename or symbol in the user's workspace, wrap it in backticks. Keep answers short and "
        "impersonal; avoid repeating what the user already knows.",
    ),
)


def system_prompt(rng: random.Random) -> str:
    """Copilot-like agent instructions, ~10 KB (~2.5k tokens)."""
    parts = [f"<{tag}>\n{text}\n</{tag}>" for tag, text in SYSTEM_SECTIONS]
    rules = [f"- {prose(rng, 2)}" for _ in range(60)]
    parts.append("<guidelines>\n" + "\n".join(rules) + "\n</guidelines>")
    parts.append(
        f"<environment_info>\nThe user's current OS is Linux. {cjk_text(rng, 2)}\n"
        "</environment_info>"
    )
    return "\n\n".join(parts)


# --- tools --------------------------------------------------------------------------------------

TOOL_NAMES: Final = _words(
    "read_file grep_search run_in_terminal file_search semantic_search list_dir create_file "
    "replace_string_in_file multi_replace_string_in_file insert_edit_into_file get_errors "
    "get_terminal_output runTests list_code_usages fetch_webpage github_repo "
    "open_simple_browser create_new_workspace get_project_setup_info install_extension "
    "run_vscode_command create_new_jupyter_notebook edit_notebook_file run_notebook_cell "
    "get_changed_files test_failure think manage_todo_list get_vscode_api "
    "vscode_searchExtensions_internal create_directory get_search_view_results "
    "terminal_last_command terminal_selection run_task create_and_run_task get_task_output "
    "configure_python_environment get_python_environment_details "
    "get_python_executable_details install_python_packages configure_notebook "
    "notebook_install_packages notebook_list_packages copilot_getNotebookSummary "
    "read_notebook_cell_output mcp_github_create_issue mcp_github_get_issue "
    "mcp_github_list_pull_requests mcp_github_create_pull_request mcp_github_search_code "
    "mcp_playwright_browser_navigate mcp_playwright_browser_click "
    "mcp_playwright_browser_snapshot mcp_playwright_browser_type "
    "mcp_pylance_mcp_s_pylanceDocuments mcp_pylance_mcp_s_pylanceImports "
    "mcp_context7_resolve-library-id mcp_context7_get-library-docs renderMermaidDiagram"
)
PROPERTIES: Final = (
    ("filePath", "string", "The absolute path of the file to operate on."),
    ("startLine", "number", "The line number to start from, 1-based."),
    ("endLine", "number", "The inclusive line number to end at, 1-based."),
    ("query", "string", "The text to search for. Be specific; use the user's own words if useful."),
    ("isRegexp", "boolean", "Whether the query is a regular expression."),
    ("includePattern", "string", "A glob pattern that limits the files searched, e.g. **/*.ts."),
    ("maxResults", "number", "The maximum number of results to return."),
    ("command", "string", "The command to run in the terminal."),
    ("explanation", "string", "A one-sentence description of what the command does."),
    ("isBackground", "boolean", "Whether the command starts a background process."),
    ("content", "string", "The content to write to the file."),
    ("oldString", "string", "The exact literal text to replace, with 3 lines of context."),
    ("newString", "string", "The exact literal text to put in place of oldString."),
    ("url", "string", "The URL to open or fetch."),
    ("repo", "string", "The GitHub repository as owner/name."),
    ("owner", "string", "The owner of the repository."),
    ("title", "string", "A short title."),
    ("body", "string", "The Markdown body."),
    ("timeout", "number", "How long to wait, in milliseconds."),
    ("cellId", "string", "The id of the notebook cell."),
    ("packageList", "array", "The packages to install."),
    ("filePaths", "array", "The absolute paths of the files to check."),
    ("symbolName", "string", "The name of the symbol, such as a function or class."),
    ("element", "string", "A human-readable description of the element, for permission checks."),
    ("ref", "string", "The exact element reference from the page snapshot."),
)
ENUMS: Final = (
    ("mode", ("create", "update", "delete", "rename")),
    ("language", ("python", "typescript", "javascript", "go", "rust", "markdown")),
    ("state", ("open", "closed", "all")),
    ("sort", ("created", "updated", "comments")),
    ("editType", ("insert", "delete", "edit")),
)
EXTRA_SENTENCES: Final = (
    "Use this tool only when the user's request needs it.",
    "The output may be truncated if it is very large.",
    "Prefer this over running shell commands, it is faster and safer.",
    "Paths must be absolute; relative paths are rejected.",
    "Call it again with a narrower query if there are too many results.",
    "Results are returned in the order they were found.",
)


def _tool_description(rng: random.Random, name: str) -> str:
    words = name.removeprefix("mcp_").replace("-", "_").split("_")
    first = f"{words[0].capitalize()} {' '.join(words[1:]) or 'the workspace'} for the user."
    return " ".join([first, *rng.sample(EXTRA_SENTENCES, rng.randint(0, 2))])


def _property(kind: str, description: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": kind, "description": description}
    if kind == "array":
        schema["items"] = {"type": "string"}
    return schema


def tool_schema(rng: random.Random, name: str) -> tuple[str, str, dict[str, Any]]:
    """Name, description and JSON schema of one tool."""
    properties: dict[str, Any] = {}
    for prop, kind, description in rng.sample(PROPERTIES, rng.randint(2, 7)):
        properties[prop] = _property(kind, description)
    roll = rng.random()
    if roll < 0.4:
        enum_name, values = rng.choice(ENUMS)
        properties[enum_name] = {
            "type": "string",
            "enum": list(values),
            "description": f"The {enum_name} to use.",
            "default": values[0],
        }
    elif roll < 0.6:
        properties["options"] = {
            "type": "object",
            "description": "Optional settings.",
            "properties": {
                "recursive": {"type": "boolean", "description": "Descend into folders."},
                "encoding": {"type": "string", "enum": ["utf-8", "utf-16", "latin1"]},
                "exclude": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Glob patterns to skip.",
                },
            },
        }
    elif roll < 0.7:
        properties["todoList"] = {
            "type": "array",
            "description": "The complete list of todo items.",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "number", "description": "Unique id, sequential from 1."},
                    "title": {"type": "string", "description": "A concise label, 3-7 words."},
                    "status": {
                        "type": "string",
                        "enum": ["not-started", "in-progress", "completed"],
                    },
                },
                "required": ["id", "title", "status"],
            },
        }
    required = sorted(rng.sample(list(properties), rng.randint(1, len(properties))))
    schema = {"type": "object", "properties": properties, "required": required}
    return name, _tool_description(rng, name), schema


# --- the request --------------------------------------------------------------------------------


@attrs.frozen
class Workload:
    """One request: `messages[0]` is the system message, then the chat; and the tools."""

    messages: list[Message]
    tools: list[Tool]

    def to_json(self) -> dict[str, Any]:
        """The same request as ARCHITECTURE §3 JSON (camelCase), as the extension sends it."""
        return {"messages": unstructure(self.messages), "tools": unstructure(self.tools)}

    def text_chunks(self) -> list[str]:
        """Every text part's value, tool results' included, in message order."""
        return [text for message in self.messages for text in _texts(message.content)]

    def schema_strings(self) -> list[str]:
        """Each key and string value of every tool, as Copilot's `countObjectTokens` visits them."""
        strings: list[str] = []
        for tool in self.tools:
            entry = {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            }
            strings.extend(_object_strings(entry))
        return strings

    def copilot_strings(self) -> list[str]:
        """What Copilot counts string by string: the tool schemas first, then the text chunks."""
        return self.schema_strings() + self.text_chunks()

    def corpus(self) -> str:
        """All request text (texts, tool-call arguments, tool definitions) as one string."""
        pieces = self.text_chunks()
        for message in self.messages:
            pieces += [
                json.dumps(p.input, ensure_ascii=False)
                for p in message.content
                if isinstance(p, ToolCallPart)
            ]
        pieces += [json.dumps(unstructure(tool), ensure_ascii=False) for tool in self.tools]
        return "\n".join(pieces)


def _texts(parts: list[Part]) -> Iterator[str]:
    for part in parts:
        if isinstance(part, TextPart):
            yield part.value
        elif isinstance(part, ToolResultPart):
            yield from _texts(part.content)


def _js_falsy(value: Any) -> bool:
    """JavaScript's falsiness: `[]` and `{}` are truthy there."""
    return (
        value is None
        or value is False
        or value == ""
        or (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0)
    )


def _object_strings(value: dict[str, Any] | list[Any]) -> Iterator[str]:
    """Keys and string values, recursively; falsy values skipped; array items keyed "0", "1"…"""
    items = enumerate(value) if isinstance(value, list) else value.items()
    for key, item in items:
        if _js_falsy(item):
            continue
        yield str(key)
        if isinstance(item, str):
            yield item
        elif isinstance(item, (dict, list)):
            yield from _object_strings(item)


def _path(rng: random.Random, ext: str) -> str:
    folder = rng.choice(("src", "src/core", "src/util", "lib", "server/app", "packages/web/src"))
    return f"/home/dev/project/{folder}/{rng.choice(NOUNS)}_{rng.randint(1, 40)}.{ext}"


def _call_arguments(rng: random.Random) -> tuple[str, dict[str, Any]]:
    name = rng.choices(
        (
            "read_file",
            "grep_search",
            "run_in_terminal",
            "list_dir",
            "replace_string_in_file",
            "get_errors",
            "semantic_search",
        ),
        weights=(8, 4, 4, 1, 3, 1, 2),
    )[0]
    if name == "read_file":
        start = rng.randint(1, 200)
        path = _path(rng, rng.choice(("py", "ts")))
        return name, {"filePath": path, "startLine": start, "endLine": start + rng.randint(50, 600)}
    if name == "grep_search":
        query = rng.choice(("def parse_", "TODO", "async function", "raise .*Error"))
        return name, {"query": query, "isRegexp": rng.random() < 0.5, "includePattern": "**/*.py"}
    if name == "run_in_terminal":
        command = rng.choice(("pytest -x -q", "npm test", "python -m mypy src", "git status"))
        return name, {"command": command, "explanation": prose(rng, 1), "isBackground": False}
    if name == "replace_string_in_file":
        return name, {
            "filePath": _path(rng, "py"),
            "oldString": _python_block(rng),
            "newString": _python_block(rng),
        }
    if name == "get_errors":
        return name, {"filePaths": [_path(rng, "ts") for _ in range(rng.randint(1, 3))]}
    if name == "list_dir":
        return name, {"path": _path(rng, "py").rsplit("/", 1)[0]}
    return name, {"query": prose(rng, 1)}


def _result_text(rng: random.Random, call: ToolCallPart) -> str:
    if call.name == "read_file":
        size = rng.randint(5_000, 20_000) if rng.random() < LONG_FILE_SHARE else 1_500
        source = python_source if str(call.input["filePath"]).endswith(".py") else typescript_source
        return source(rng, size)
    results: dict[str, Callable[[], str]] = {
        "grep_search": lambda: grep_output(rng, rng.randint(5, 40)),
        "run_in_terminal": lambda: terminal_output(rng),
        "get_errors": lambda: json_blob(rng, 3),
        "list_dir": lambda: listing(rng),
        "semantic_search": lambda: "\n\n".join(_python_block(rng) for _ in range(4)),
    }
    return results.get(call.name, lambda: "The edit was applied.\n" + cjk_text(rng, 1))()


class _Chat:
    """Builds the conversation turn by turn: a request, tool rounds, an answer."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.calls = 0

    def _extra(self, choices: tuple[str, ...]) -> list[Part]:
        rng = self.rng
        kind = rng.choice(choices)
        texts = {
            "py": lambda: f"```python\n{python_source(rng, rng.randint(300, 1500))}```",
            "ts": lambda: f"```ts\n{typescript_source(rng, rng.randint(300, 1500))}```",
            "cjk": lambda: cjk_text(rng, rng.randint(2, 8)),
            "trace": lambda: stack_trace(rng),
            "json": lambda: json_blob(rng, 2),
        }
        return [TextPart(texts[kind]())] if kind in texts else []

    def request(self) -> Message:
        first: Part = TextPart(prose(self.rng, self.rng.randint(1, 4)))
        return Message("user", [first, *self._extra(("", "py", "ts", "cjk", "trace", "json"))])

    def tool_calls(self) -> Message:
        rng = self.rng
        parts: list[Part] = [TextPart(prose(rng, rng.randint(1, 2)))] if rng.random() < 0.6 else []
        for _ in range(rng.choices((1, 2, 3), weights=(6, 3, 1))[0]):
            self.calls += 1
            name, arguments = _call_arguments(rng)
            call_id = f"call_{self.calls:03d}_{rng.getrandbits(48):012x}"
            parts.append(ToolCallPart(call_id, name, arguments))
        return Message("assistant", parts)

    def tool_results(self, calls: Message) -> Message:
        return Message(
            "user",
            [
                ToolResultPart(part.call_id, [TextPart(_result_text(self.rng, part))])
                for part in calls.content
                if isinstance(part, ToolCallPart)
            ],
        )

    def answer(self) -> Message:
        first: Part = TextPart(prose(self.rng, self.rng.randint(2, 6)))
        return Message("assistant", [first, *self._extra(("", "", "py", "ts", "cjk"))])

    def build(self, count: int) -> list[Message]:
        messages: list[Message] = []
        while len(messages) < count:
            messages.append(self.request())
            for _ in range(self.rng.choices((0, 1, 2, 3), weights=(1, 3, 3, 2))[0]):
                calls = self.tool_calls()
                messages += [calls, self.tool_results(calls)]
            messages.append(self.answer())
        chat = messages[:count]
        if chat[-1].role == "assistant":  # A request ends with the user's turn.
            chat[-1] = self.request()
        return chat


def build_tools(rng: random.Random, count: int = TOOL_COUNT) -> list[Tool]:
    """`count` tools with Copilot's tool names and realistic JSON schemas."""
    return [Tool(*tool_schema(rng, name)) for name in TOOL_NAMES[:count]]


def build_workload(
    seed: int = SEED, message_count: int = MESSAGE_COUNT, tool_count: int = TOOL_COUNT
) -> Workload:
    """The benchmark request: same seed, same request."""
    rng = random.Random(seed)
    system = Message("system", [TextPart(system_prompt(rng))])
    chat = _Chat(rng).build(message_count)
    return Workload(messages=[system, *chat], tools=build_tools(rng, tool_count))


def workload_json(seed: int = SEED) -> dict[str, Any]:
    """`build_workload(seed)` as wire JSON (ARCHITECTURE §3), by `messages.unstructure`."""
    return build_workload(seed).to_json()
