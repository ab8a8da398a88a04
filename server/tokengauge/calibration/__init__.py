"""Learning from what the API reports: estimates with margins, the fit behind them, the error
classifier, the input/output budget, and the send path's safety net."""
