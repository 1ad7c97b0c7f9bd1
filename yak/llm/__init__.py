"""The model provider: Anthropic's Messages API through the official SDK, errors translated."""
