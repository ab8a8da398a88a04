"""A stand-in for the client: Copilot Chat 0.67's agent loop (`agent`, counting what it renders with
the product's `counting.copilot_view`, `render`), and the conversations it runs (`scenario`: the
seeded one of `conversation` and `workload`, the recorded Copilot host suite's of
`host_scenario`)."""
