"""The models tokengauge offers: the built-in table and the catalog merged over it, each model's
window and input budget (`windows`, `budget`), and what VS Code is told of them (`offer`,
`declared`)."""
