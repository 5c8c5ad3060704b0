"""What a played memory item keeps besides the rollout's evidence (agentic/memory.py): the snapshot it started from,
and its scenario's prerequisite chain (an outline on every item; each conversation's turns, transcript and flushed
snapshot on the scenario's first item). Explore shows both as JSON."""

from __future__ import annotations

from evaluators.core.declarations import EvidenceKind

MEMORY_SNAPSHOT = "memory_snapshot"
MEMORY_PREREQS = "memory_prereqs"

MEMORY_EVIDENCE: tuple[EvidenceKind, ...] = (
    EvidenceKind(MEMORY_SNAPSHOT, "Memory snapshot the item started from", "json",
                 description="the scenario's <scenario>_final.json as the item loaded it, and the prerequisite "
                             "conversation that flushed it (none: the item started from an empty memory)"),
    EvidenceKind(MEMORY_PREREQS, "Prerequisite conversations (not scored)", "json",
                 description="the scenario's chain: each conversation's id, why it stopped, turns and steps played, "
                             "error, and the tokens they used; the scenario's first item (kept_with) also holds each "
                             "conversation's model texts, transcript and the snapshot it flushed"),
)
