"""Workload parameters declared once: the same declaration makes the command-line flags, the
GUI form and the validation, so a bad value is refused with one sentence before anything runs."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

KINDS = ("int", "float", "bool", "choice", "int_list", "choice_list", "str")

# Labels for names that read badly capitalised ("Sizes mb"); a Param's own title wins.
LABELS = {"sizes": "Matrix sizes", "sizes_mb": "Array sizes (MB)", "ops": "Operations",
          "cifar": "CIFAR-10 data", "seq_len": "Sequence length", "image_size": "Image size (px)",
          "channels_last": "Channels last (NHWC)", "duration": "Duration (minutes)",
          "probe_time_limit": "Probe time limit (s)", "check": "Check against the CPU",
          "check_steps": "Check steps", "xla": "XLA", "max_batch": "Largest batch",
          "start_batch": "First batch", "bisect_steps": "Bisection steps",
          "samples": "Training images"}
# Beyond this many choices a message names the closest ones instead of all of them.
LIST_ALL_UP_TO = 12


class ParamError(ValueError):
    """A user-supplied parameter is wrong; the message is one sentence for the user."""


def bound(v: float) -> str:
    """A limit or a value as a person reads it: whole numbers in full (68,719,476,736, not
    the 6.87195e+10 that :g makes of 2**36), others in :g."""
    return f"{v:,}" if isinstance(v, int) else f"{v:g}"


@dataclass(frozen=True)
class Param:
    """One parameter of a workload: its flag, its form field and how its text is read."""
    name: str                      # python name; the flag is --name-with-dashes
    kind: str                      # one of KINDS
    default: Any
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    auto: str = ""                 # when default is None: what "auto" means, for help texts
    title: str = ""                # the form's label, when the capitalised name reads badly
    path: bool = False             # a file or folder: the form offers Choose…

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind

    @property
    def label(self) -> str:
        return self.title or LABELS.get(self.name) or self.name.replace("_", " ").capitalize()

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def parse(self, text: str) -> Any:
        """A value typed by a user (command line, GUI field) -> a validated value."""
        if not isinstance(text, str):     # argparse gives [] for `--flag=--`
            raise ParamError(f"{self.flag} needs a value.")
        text = text.strip()
        if self.kind == "bool":
            low = text.lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise ParamError(f"{self.flag} takes true or false, not {text!r}.")
        if self.kind in ("int_list", "choice_list"):
            items = [t.strip() for t in text.split(",") if t.strip()]
            if not items:
                raise ParamError(f"{self.flag} needs at least one value.")
            return self.validate(items)
        return self.validate(text)

    def validate(self, value: Any) -> Any:
        """A value from JSON, the GUI or parse() -> the checked value, or ParamError."""
        if value is None:
            if self.default is None:
                return None
            raise ParamError(f"{self.flag} needs a value.")
        if self.kind == "int":
            return self._number(self._int(value))
        if self.kind == "float":
            try:
                v = float(value)
            except (TypeError, ValueError, OverflowError):
                raise ParamError(f"{self.flag} takes a number, not {_shown(value)}.") from None
            if not math.isfinite(v):   # NaN passes every bound check: it compares false
                raise ParamError(f"{self.flag} takes a finite number, not {_shown(value)}.")
            return self._number(v)
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            if isinstance(value, str):
                return self.parse(value)
            raise ParamError(f"{self.flag} takes true or false, not {value!r}.")
        if self.kind == "choice":
            return self._choice(value)
        if self.kind == "str":
            return str(value)
        if isinstance(value, (str, int)):
            value = [value]
        if not isinstance(value, (list, tuple)) or not value:
            raise ParamError(f"{self.flag} needs at least one value.")
        if self.kind == "int_list":
            return [self._number(self._int(v)) for v in value]
        return [self._choice(v) for v in value]

    def _int(self, value: Any) -> int:
        if isinstance(value, bool):
            raise ParamError(f"{self.flag} takes a whole number, not {value!r}.")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        try:
            return int(str(value).strip())
        except ValueError:
            raise ParamError(f"{self.flag} takes whole numbers, not {value!r}.") from None

    def _number(self, v: float) -> float:
        if self.min is not None and v < self.min:
            raise ParamError(f"{self.flag} must be at least {bound(self.min)}, not {bound(v)}.")
        if self.max is not None and v > self.max:
            raise ParamError(f"{self.flag} must be at most {bound(self.max)}, not {bound(v)}.")
        return v

    def _choice(self, value: Any) -> str:
        v = str(value).strip()
        if v not in self.choices:
            if len(self.choices) <= LIST_ALL_UP_TO:
                raise ParamError(f"{self.flag} must be one of {', '.join(self.choices)}, "
                                 f"not {v!r}.")
            import difflib
            close = difflib.get_close_matches(v, self.choices, n=3, cutoff=0.5)
            hint = f"did you mean {' or '.join(close)}?" if close else \
                f"see siliconbench workloads for all {len(self.choices)}."
            raise ParamError(f"{self.flag} does not know {v!r}; {hint}")
        return v

    def form_message(self, error: ParamError) -> str:
        """A ParamError worded for the app's form: the field's label, not the flag."""
        text = str(error).replace(self.flag, self.label)
        return text.replace("siliconbench workloads", "the list")

    def format(self, value: Any) -> str:
        """The inverse of parse, for showing a value in a field or a table."""
        if value is None:
            return ""
        if isinstance(value, (list, tuple)):
            return ",".join(str(v) for v in value)
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    def to_dict(self) -> dict:
        return {"name": self.name, "flag": self.flag, "kind": self.kind, "default": self.default,
                "help": self.help, "min": self.min, "max": self.max,
                "choices": list(self.choices), "auto": self.auto, "title": self.label,
                "path": self.path}


def _shown(value: Any) -> str:
    from siliconbench.core.text import clip
    return repr(clip(str(value)))


def closest(value: str, names: list[str] | tuple[str, ...], count: int = 3) -> str:
    """'a, b or c': the names most like `value`, for a refusal that stays one short sentence
    however many names there are; '' when none is close."""
    import difflib  # for a mistyped name only; the app's form imports this module at start
    found = difflib.get_close_matches(str(value), list(names), n=count, cutoff=0.5)
    return ", ".join(found[:-1]) + " or " + found[-1] if len(found) > 1 else "".join(found)


def worded_for_form(declared: tuple[Param, ...], text: str) -> str:
    """A sentence about several parameters (a workload's checks) worded for the app's form:
    each field's label, not its flag (longest flags first: --batch-size before --batch)."""
    for p in sorted(declared, key=lambda p: -len(p.flag)):
        text = text.replace(p.flag, p.label)
    return text


def resolve(declared: tuple[Param, ...], given: dict[str, Any]) -> dict[str, Any]:
    """Validate `given` against the declaration and fill in defaults (None means "auto")."""
    by_name = {p.name: p for p in declared}
    unknown = sorted(set(given) - set(by_name))
    if unknown:
        known = ", ".join(p.flag for p in declared) or "none"
        raise ParamError(f"Unknown parameter {unknown[0]!r}; this workload takes {known}.")
    out = {}
    for p in declared:
        out[p.name] = p.validate(given[p.name]) if p.name in given else p.default
    return out


def resource_choices(name: str, key: str) -> tuple[str, ...]:
    """A list of choices shipped in siliconbench/resources/ (e.g. torchvision's models, generated by a
    script, so no process but a run's child ever imports the framework)."""
    import json

    from siliconbench import resources
    return tuple(json.loads(resources.read_text(name))[key])
