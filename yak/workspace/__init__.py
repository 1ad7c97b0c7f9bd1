"""Workspace services: the async facade the UI uses for workspaces and their memory."""
