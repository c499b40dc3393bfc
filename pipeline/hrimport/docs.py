"""Keep the README's generated parts true: ``python -m hrimport.docs`` rewrites them in place."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

from hrimport import fields

BEGIN, END = "<!-- fields:begin -->", "<!-- fields:end -->"


def field_tables() -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fields.main()
    return out.getvalue().rstrip()


def render_readme(text: str) -> str:
    """``text`` with the part between the field-table markers regenerated from the field specification."""
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.DOTALL)
    return pattern.sub(lambda _: f"{BEGIN}\n{field_tables()}\n{END}", text)


def main(path: str = "README.md") -> None:
    readme = Path(path)
    readme.write_text(render_readme(readme.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:])
