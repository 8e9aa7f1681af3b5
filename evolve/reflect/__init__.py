"""Reflection: a bundle goes to one model call, whose answer becomes validated operations."""
