"""SafeBranch branch-pair construction: online collection with critics, relabel, judge, prune, funnel."""
