"""How soupd reads text: the one tokenizer recall, surprise and everything else share.

The bottom room: it imports nothing of soupd.
"""

# The modules other rooms may import; the rest are this room's own.
__all__ = ["tokenize"]
