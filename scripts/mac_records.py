"""Write the Mac records issue 50's screenshot cases use (scripts/screenshots.py CASES) to a
folder: a real run (tests/data/records/gemm-torch.json) with the machine fields of a MacBook
Pro (Mac14,6), a Mac Studio (Mac14,13) and a colleague's identical MacBook Pro, as
tests/helpers/mac_records.py makes them, and the Studio's three repeats with one
outlier.

    python scripts/mac_records.py OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    from siliconbench.core.export import to_json
    from tests.helpers.mac_records import repeats_with_an_outlier, three_macs
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    mbp, studio, colleague = three_macs()
    for name, recs in (("mac-mbp", [mbp]), ("mac-studio", [studio]),
                       ("mac-mbp-colleague", [colleague]),
                       ("mac-studio-repeats", repeats_with_an_outlier())):
        (out / f"{name}.json").write_text(to_json(recs), encoding="utf-8")
        print(out / f"{name}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
