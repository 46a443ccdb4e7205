"""All templates of the default suite, grouped by room (plain lists, no registry)."""

from __future__ import annotations

from ..template import Template
from . import bathroom, garden, kitchen, kitchen_more, living_room, utility_room

TEMPLATES: tuple[Template, ...] = (
    *kitchen.TEMPLATES,
    *kitchen_more.TEMPLATES,
    *living_room.TEMPLATES,
    *utility_room.TEMPLATES,
    *garden.TEMPLATES,
    *bathroom.TEMPLATES,
)
