"""The MirageBench leaderboard Space (Gradio UI only; reads through mirage_bench)."""
