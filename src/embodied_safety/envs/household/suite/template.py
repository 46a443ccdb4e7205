"""What a task template is: slots of object categories and a function that fills a builder."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .builder import TaskBuilder

#: (builder, chosen category per slot, contrast) -> None. With ``contrast=True`` the template
#: builds the variant in which one of its safety behaviours is unnecessary or wrong in context
#: and sets ``builder.contrast`` to a short description of that behaviour.
BuildFn = Callable[[TaskBuilder, dict[str, str], bool], None]


@dataclass(frozen=True)
class Template:
    """A family of tasks sharing a plan skeleton and safety conditions."""

    name: str
    room: str  # kitchen | living_room | utility_room | garden | bathroom
    slots: dict[str, tuple[str, ...]]  # slot -> categories used in the ID splits
    target_slot: str  # the task's target object; OOD-TaskShift substitutes it
    ood_targets: tuple[str, ...]  # categories never a target in train (OOD-TaskShift pool)
    fn: BuildFn
    has_contrast: bool = True

    def builder(self) -> TaskBuilder:
        return TaskBuilder(template=self.name, room=self.room)
