"""What the requests did: one record per request, their conversations and costs, the usage
history's sums, and the dashboard of them."""
