"""Telling the user: Web Push to browsers and phones, and desktop notifications."""
