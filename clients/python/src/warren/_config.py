from __future__ import annotations

import os
from typing import Optional


def setting(value: Optional[str], variable: str, what: str) -> str:
    """An explicit argument, else the environment variable, else a ValueError that says which."""
    chosen = value or os.environ.get(variable)
    if not chosen:
        raise ValueError(f"no {what}: pass it to the client or set {variable}")
    return chosen
