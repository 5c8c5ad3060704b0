"""The agentic categories' samples, read as the official evaluation reads them (`load_dataset_entry(category,
include_prereq=False)` + `load_ground_truth_entry`), from the same source as the other categories (a folder laid
out like the wheel's `bfcl_eval/data/`, or the wheel):

- memory: `BFCL_v4_memory.json` (155 questions) serves the three backends; the id's `memory` becomes the category
  (`memory_0-customer-0` -> `memory_kv_0-customer-0`, every occurrence replaced, as the official rename does);
  answers from `possible_answer/BFCL_v4_memory.json`, whose ids keep the un-prefixed form.
- web search: `BFCL_v4_web_search.json` (100 questions) serves both variants (`web_search_0` ->
  `web_search_no_snippet_0`); answers from `possible_answer/BFCL_v4_web_search.json`.

Answers are paired with questions BY POSITION, as the official runner pairs them (its ids differ between the two
files after the rename); the files' own ids must still agree line by line, so a reordered copy is refused rather
than silently scored against the wrong answers. The prerequisite conversations (memory) and the function docs are
only needed to play the items, and are attached when the source has them: a web search item carries the tools'
docs (`multi_turn_func_doc/web_search.json`, every item the same list) in input["function"]; a memory item carries
its backend's docs (`multi_turn_func_doc/memory_<backend>.json`), its class (`MemoryAPI_<backend>`) in
input["involved_classes"] and its scenario's prerequisite conversations
(`memory_prereq_conversation/memory_<scenario>.json`, file order, ids renamed as the official loader renames them:
`memory_prereq_0-customer-0` -> `memory_kv_prereq_0-customer-0`) in input["prereqs"], each `{"id", "question"}`
(one user message a turn). The items of one category share those lists.

```
Sample(id="memory_kv_0-customer-0", subset="memory_kv",
       input={"question": [[{"role": "user", "content": ...}]], "scenario": "customer",     # scenario: memory only
              "function": [...], "involved_classes": ["MemoryAPI_kv"], "prereqs": [{"id", "question"}, ...],
              "chain_head": "memory_kv_0-customer-0"},   # the scenario's first item: it keeps the chain's evidence
       gold=["Michael", ...],                  # the possible answers (ground_truth)
       meta={"category": "memory_kv", "language": "python", "answer_id": "memory_0-customer-0"})
```
"""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.bfcl.categories import AGENTIC, MEMORY, PYTHON, WEB_SEARCH
from evaluators.benchmarks.bfcl.records import paired_with_answers, required_fields
from evaluators.core.errors import DataError
from evaluators.core.types import Sample

MEMORY_FILE = "BFCL_v4_memory.json"
WEB_SEARCH_FILE = "BFCL_v4_web_search.json"
AGENTIC_FILES = (MEMORY_FILE, WEB_SEARCH_FILE)
# The web search tools' docs (the official MULTI_TURN_FUNC_DOC_FILE_MAPPING of WebSearchAPI), needed to play.
WEB_SEARCH_DOCS = "multi_turn_func_doc/web_search.json"
# Memory: the docs of a backend's tools and the prerequisite conversations of a scenario.
MEMORY_DOCS = "multi_turn_func_doc/memory_{backend}.json"
PREREQ_FILE = "memory_prereq_conversation/memory_{scenario}.json"
MEMORY_CLASS = "MemoryAPI_{backend}"
# The word each shared file's ids carry, replaced by the category (official process_*_test_case).
MEMORY_WORD = "memory"
WEB_SEARCH_WORD = "web_search"


def shared_file(category: str) -> tuple[str, str]:
    """(the questions file, the word its ids carry) a category reads."""
    if category in MEMORY:
        return MEMORY_FILE, MEMORY_WORD
    if category in WEB_SEARCH:
        return WEB_SEARCH_FILE, WEB_SEARCH_WORD
    raise DataError(f"{category} is not an agentic category; known: {', '.join(AGENTIC)}")


def official_agentic_id(file_id: str, word: str, category: str) -> str:
    """The id the official loader gives an item of a shared file: every `word` in it replaced by the category."""
    return file_id.replace(word, category)


def has_agentic_files(source: Any) -> bool:
    """Whether a source holds the agentic question files (a copy of the single-turn data may not)."""
    return bool(source.has(MEMORY_FILE) or source.has(WEB_SEARCH_FILE))


def _check_question(question: list[Any], where: str, line: int) -> None:
    if len(question) != 1 or not isinstance(question[0], list) or not question[0]:
        raise DataError("field 'question' must hold one turn of messages (an agentic item has one)", where, line)
    for index, message in enumerate(question[0]):
        if (not isinstance(message, dict) or not isinstance(message.get("role"), str)
                or not isinstance(message.get("content"), str)):
            raise DataError(f"question[0][{index}] must be a message with a string 'role' and 'content'", where, line)


def _check_answer(answer: Any, file_id: str, where: str, line: int, questions_file: str) -> list[str]:
    answer = required_fields(answer, {"id": str, "ground_truth": list}, where, line)
    if answer["id"] != file_id:
        raise DataError(f"answer id {answer['id']!r} does not match the item id {file_id!r} at the same position "
                        f"({questions_file}); the official runner pairs them by position", where, line)
    gold: list[str] = answer["ground_truth"]
    if not gold or not all(isinstance(text, str) for text in gold):
        raise DataError("field 'ground_truth' must be a non-empty list of answer texts", where, line)
    return gold


def _web_search_docs(source: Any) -> list[dict] | None:
    """The two tools' docs, as populate_test_cases_with_predefined_functions gives them (None: the source lacks
    them, so its items can be scored but not played)."""
    if not source.has(WEB_SEARCH_DOCS):
        return None
    docs = []
    for line, doc in source.read(WEB_SEARCH_DOCS):
        if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
            raise DataError("expected a function doc with a string 'name'", source.where(WEB_SEARCH_DOCS), line)
        docs.append(doc)
    return docs


def memory_backend(category: str) -> str:
    """`memory_kv` -> `kv` (the official extract_memory_backend_type)."""
    return category[len(MEMORY_WORD) + 1:]


def _memory_docs(source: Any, category: str) -> list[dict] | None:
    relative = MEMORY_DOCS.format(backend=memory_backend(category))
    if not source.has(relative):
        return None
    docs = []
    for line, doc in source.read(relative):
        if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
            raise DataError("expected a function doc with a string 'name'", source.where(relative), line)
        docs.append(doc)
    return docs


def _prereqs(source: Any, category: str, scenario: str) -> list[dict[str, Any]] | None:
    """A scenario's prerequisite conversations as the official loader gives them for `category` (None: the source
    lacks the file, so the scenario's items can be scored but not played)."""
    relative = PREREQ_FILE.format(scenario=scenario)
    if not source.has(relative):
        return None
    where = source.where(relative)
    conversations = []
    for line, record in source.read(relative):
        item = required_fields(record, {"id": str, "question": list}, where, line)
        if not item["id"].startswith(MEMORY_WORD + "_prereq_") or item.get("scenario", scenario) != scenario:
            raise DataError(f"id {item['id']!r} is not a prerequisite conversation of scenario {scenario!r}", where, line)
        for turn, messages in enumerate(item["question"]):
            if (not isinstance(messages, list) or len(messages) != 1 or not isinstance(messages[0], dict)
                    or messages[0].get("role") != "user" or not isinstance(messages[0].get("content"), str)):
                raise DataError(f"question[{turn}] must be one user message (a prerequisite turn has one)", where, line)
        conversations.append({"id": official_agentic_id(item["id"], MEMORY_WORD, category),
                              "question": item["question"]})
    if not conversations:
        raise DataError(f"no prerequisite conversation for scenario {scenario!r}", where)
    return conversations


def load_agentic_category(source: Any, category: str) -> list[Sample]:
    """One agentic category's items in file order; `source` is bfcl.data.DataSource."""
    questions_file, word = shared_file(category)
    questions, answers, where, answer_where = paired_with_answers(source, questions_file)
    docs = _web_search_docs(source) if category in WEB_SEARCH else _memory_docs(source, category)
    prereqs: dict[str, list[dict[str, Any]] | None] = {}
    heads: dict[str, str] = {}  # scenario -> its first item's id (that item keeps the chain's whole evidence)
    samples = []
    for (line, record), (answer_line, answer) in zip(questions, answers):
        item = required_fields(record, {"id": str, "question": list}, where, line)
        if not item["id"].startswith(word + "_"):
            raise DataError(f"id {item['id']!r} does not start with {word + '_'!r}", where, line)
        _check_question(item["question"], where, line)
        gold = _check_answer(answer, item["id"], answer_where, answer_line, questions_file)
        sample_input: dict[str, Any] = {"question": item["question"]}
        if category in MEMORY:
            if not isinstance(item.get("scenario"), str):
                raise DataError("a memory item needs a string 'scenario'", where, line)
            sample_input["scenario"] = scenario = item["scenario"]
            if scenario not in prereqs:
                prereqs[scenario] = _prereqs(source, category, scenario)
            if docs is not None and prereqs[scenario] is not None:
                sample_input["involved_classes"] = [MEMORY_CLASS.format(backend=memory_backend(category))]
                sample_input["prereqs"] = prereqs[scenario]
                sample_input["chain_head"] = heads.setdefault(scenario, official_agentic_id(item["id"], word, category))
        if docs is not None:
            sample_input["function"] = docs
        samples.append(Sample(
            id=official_agentic_id(item["id"], word, category), subset=category, input=sample_input, gold=gold,
            meta={"category": category, "language": PYTHON, "answer_id": answer["id"]},
        ))
    return samples
