"""Intake: the write path's gates, from an event as it arrives to a memory worth storing.

The hygiene gate (:mod:`~souls.intake.hygiene_gate`, DESIGN §3.1) is the one write
boundary: it refuses secrets, oversized and malformed text. The attention gate
(:mod:`~souls.intake.attention_gate`, §3.2) scores salience by rule, and
:mod:`~souls.intake.surprise` (§3.3) the prediction error against the world model.
:mod:`~souls.intake.intake` takes one event through all three, and
:mod:`~souls.intake.field_screen` holds every other text of a request (a sender, a tag,
a query) to the gate's credential rule.

May import :mod:`souls.store`, :mod:`souls.text`, the vocabulary (events, messages,
results) and :mod:`supervisor.errors`; never a room above it.
"""

# The modules other rooms may import; the rest are this room's own.
__all__ = ["attention_gate", "field_screen", "hygiene_gate", "intake", "surprise"]
