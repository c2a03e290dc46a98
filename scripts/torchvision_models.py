"""Writes siliconbench/resources/torchvision_models.json: the classification models of the installed
torchvision, which the inference workload offers and accepts (the app never imports torch, so
it reads this list instead). Run again after upgrading torchvision; tests/core/test_params.py checks
the list against the installed torchvision in a child process.

    python scripts/torchvision_models.py
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "siliconbench" / "resources" / "torchvision_models.json"


def installed_models() -> tuple[str, list[str]]:
    import torchvision
    from torchvision import models
    return torchvision.__version__, sorted(models.list_models(module=models))


def main() -> None:
    version, names = installed_models()
    OUT.write_text(json.dumps({"torchvision": version, "models": names}, indent=1) + "\n")
    print(f"Wrote {len(names)} models of torchvision {version} to {OUT}")


if __name__ == "__main__":
    main()
