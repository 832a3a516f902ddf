"""The `evaluate` Space of this metric: `python app.py` serves evaluate's Gradio widget for it.

Push this folder (README.md with its Space YAML, over_inference.py, app.py, requirements.txt) as a Space.
Nothing runs on import (the package's doctest collection imports this file).
"""

if __name__ == "__main__":
    from pathlib import Path

    import evaluate
    from evaluate.utils import launch_gradio_widget

    launch_gradio_widget(evaluate.load(str(Path(__file__).resolve().parent)))
