"""Chat: sessions and the conversation service the UI drives."""
