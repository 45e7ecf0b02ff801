"""How soupd reads text: the one tokenizer recall, surprise and everything else share
(:mod:`~souls.text.tokenize`), and which of its tokens are content words
(:mod:`~souls.text.content`: what surprise measures and a feeling can be about).

The bottom room: it imports nothing of soupd.
"""

# The modules other rooms may import; the rest are this room's own.
__all__ = ["content", "tokenize"]
