"""Schedules and sensors for the maintenance jobs."""
