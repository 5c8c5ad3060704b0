"""Small stand-ins for the official ACEBench request files, in the repository's layout
(`model_inference/prompt_en.py`, …) with our own made-up texts: for tests that must run without the
real data. Each file also holds code that would leave a marker file if it were ever executed."""

from __future__ import annotations

from pathlib import Path

_PROMPTS = '''
SYSTEM_PROMPT_FOR_NORMAL_DATA_{L} = """[{l}] normal rules.
{{time}}
Specs: {{function}}"""
SYSTEM_PROMPT_FOR_PREFERENCE_DATA_{L} = """[{l}] preference rules.
Profile: {{profile}}
Specs: {{function}}"""
SYSTEM_PROMPT_FOR_SPECIAL_DATA_{L} = """[{l}] special rules. Time {{time}}; specs {{function}}"""
USER_PROMPT_{L} = """[{l}] history:\\n{{question}}"""
TRAVEL_PROMPT_{L} = """[{l}] airline policy, braces kept: {{"a": 1}}"""
BASE_PROMPT_{L} = """[{l}] phone policy."""
NOT_TEXT_{L} = 3
'''

_TURN_AGENT = '''
MULTI_TURN_AGENT_PROMPT_SYSTEM_{L} = """[{l}] multi-turn agent rules. """
MULTI_TURN_AGENT_PROMPT_USER_{L} = """[{l}] apis: {{functions}}\\nhistory:\\n{{history}}"""
'''

_STEP_AGENT = '''
MULTI_TURN_AGENT_PROMPT_SYSTEM_{L} = """[{l}] multi-step agent rules {{{{literal braces}}}}."""
MULTI_TURN_AGENT_PROMPT_USER_{L} = """[{l}] step apis: {{functions}} history: {{history}}\\n"""
'''

_USER = '''
SYSTEM_PROMPT_BASE_{L} = """[{l}] phone user. Instruction: {{instruction}}"""
SYSTEM_PROMPT_TRAVEL_{L} = """[{l}] airline user. Instruction: {{instruction}}"""
'''

_USER_CLASS = '''

class APIUSER:
    def get_init_prompt(self, question):
        if self.language == "zh":
            self.messages = [{"role": "system", "content": "x"}, {"role": "user", "content": "[zh] how can I help?"}]
        elif self.language == "en":
            self.messages = [{"role": "system", "content": "x"}, {"role": "user", "content": "[en] how can I help?"}]
'''

EXECUTION_MARKER = "executed.txt"


def _tripwire(root: Path) -> str:
    return f"\nopen({str(root / EXECUTION_MARKER)!r}, 'w').write('this file was executed')\n"


def write_official_files(root: Path) -> Path:
    """`root/model_inference/…` with every file and constant the official requests use."""
    code = root / "model_inference"
    (code / "multi_turn").mkdir(parents=True, exist_ok=True)
    (code / "multi_step").mkdir(parents=True, exist_ok=True)
    files = {
        "prompt_en.py": _PROMPTS.format(L="EN", l="en"),
        "prompt_zh.py": _PROMPTS.format(L="ZH", l="zh"),
        "multi_turn/APIModel_agent.py": _TURN_AGENT.format(L="EN", l="en") + _TURN_AGENT.format(L="ZH", l="zh"),
        "multi_step/APIModel_agent.py": _STEP_AGENT.format(L="EN", l="en") + _STEP_AGENT.format(L="ZH", l="zh"),
        "multi_turn/APIModel_user.py": _USER.format(L="EN", l="en") + _USER.format(L="ZH", l="zh") + _USER_CLASS,
    }
    for name, text in files.items():
        (code / name).write_text(text + _tripwire(root), encoding="utf-8")
    return code
