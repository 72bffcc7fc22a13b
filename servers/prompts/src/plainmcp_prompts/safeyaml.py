"""YAML for front matter, bounded while it is read: aliases, expanded size and nesting.

PyYAML's safe loader builds plain data only, but a few hundred bytes can still describe a huge
value: aliases (``*a``) repeat a node by reference, and nine levels of nine aliases describe a
billion strings. The data shares the references, so loading is quick; anything that walks or
formats the value (a comparison, an error message) expands it. Deep nesting (``[[[[...``) makes the
recursive composer run out of stack instead.

:class:`BoundedLoader` checks while it composes, before anything is built: at most
:data:`MAX_ALIASES` aliases, no alias to a node that contains it, an expanded size (every node
counted once per place it appears, scalars by their length) of at most :data:`MAX_EXPANDED`, and a
nesting depth of at most :data:`MAX_DEPTH`. A text over a limit is refused with
:class:`LimitError` (a ``yaml.MarkedYAMLError``, so it carries the line where it was noticed).
"""

from __future__ import annotations

from typing import Any

import yaml

#: Aliases (``*name``) allowed in one front matter. Sharing a list of values between two arguments
#: takes one; a bomb takes dozens.
MAX_ALIASES = 32
#: Nodes nested in each other (the front matter mapping is 1, a scalar in it 2). Front matter needs 5.
MAX_DEPTH = 32
#: Size of the value with every alias expanded: one per node, plus each scalar's length.
MAX_EXPANDED = 256 * 1024


class LimitError(yaml.MarkedYAMLError):
    """The YAML describes more than the limits allow: ``problem`` says which, ``problem_mark`` where."""

    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem=problem, problem_mark=mark)


class BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing (with :class:`LimitError`) what exceeds the module's limits."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0
        self._expanded = 0
        #: Expanded size of each anchored node, charged again at every alias to it.
        self._anchor_sizes: dict[str, int] = {}
        #: Anchors whose node is being composed: an alias to one would make the value contain itself.
        self._open_anchors: set[str] = set()

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise LimitError(f"uses more than {MAX_ALIASES} aliases (*name)", event.start_mark)
            if event.anchor in self._open_anchors:
                raise LimitError("has an alias (*name) inside the node it names", event.start_mark)
            self._charge(self._anchor_sizes.get(event.anchor or "", 0), event.start_mark)  # an alias has an anchor
            return super().compose_node(parent, index)
        # Checked before descending: the composer recurses once per level.
        if self._depth >= MAX_DEPTH:
            raise LimitError(f"is nested deeper than {MAX_DEPTH} levels", event.start_mark)
        anchor = event.anchor
        before = self._expanded
        if anchor is not None:
            self._open_anchors.add(anchor)
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
            self._open_anchors.discard(anchor)
        self._charge(1 + (len(node.value) if isinstance(node, yaml.ScalarNode) else 0), event.start_mark)
        if anchor is not None:
            self._anchor_sizes[anchor] = self._expanded - before
        return node

    def _charge(self, size: int, mark: Any) -> None:
        self._expanded += size
        if self._expanded > MAX_EXPANDED:
            raise LimitError(f"describes a value larger than {MAX_EXPANDED} (aliases expanded)", mark)


def load(text: str) -> Any:
    """The data of the single YAML document ``text``, within the limits.

    Raises ``yaml.YAMLError`` (:class:`LimitError` for a limit), or ValueError / OverflowError for a
    value PyYAML matched but Python cannot build (a date out of range, an integer of too many digits).
    """
    loader = BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def compose(text: str) -> Any:
    """The node tree of ``text`` (for line numbers), within the same limits. Raises ``yaml.YAMLError``."""
    loader = BoundedLoader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()
