"""The review inbox (``review``: :class:`~yak.memory.inbox.review.ReviewInbox`): proposals that
wait for the person, and the person's answer to each ("The inbox" in docs/memory.md).
"""
