"""What the models are sent about the memory: the rewrite request (``rewrite``), the
conversations formatted as its input (``transcript``) and the memory block at the top of a
chat's system prompt (``injection``). Pure.
"""
