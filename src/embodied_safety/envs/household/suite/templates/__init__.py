"""All templates of the default suite, grouped by room (plain lists, no registry)."""

from __future__ import annotations

from ..template import Template
from . import kitchen

TEMPLATES: tuple[Template, ...] = (*kitchen.TEMPLATES,)
