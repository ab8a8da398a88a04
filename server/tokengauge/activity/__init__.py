"""What the requests did: one record per request, their conversations, and the dashboard of them."""
