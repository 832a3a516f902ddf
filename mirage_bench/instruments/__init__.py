"""The Probe / Task / Judge / Accum instruments and persona generation."""
