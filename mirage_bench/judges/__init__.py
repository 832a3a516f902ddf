"""The judge as a measured instrument: judge configs as data, fixed-claim judging, agreement glue,
the drift canary and the cost estimate of a run before it is spent."""
