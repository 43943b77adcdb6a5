"""The focus runtime's pure core: what code a goal needs, within a token budget.

``graph``        the code graph the index hands over (nodes, edges, git signals)
``text``         identifier splitting and the precise cues inside a goal
``lexical``      BM25 over files and over single functions
``salience``     seeds fused by RRF, personalized PageRank, priors → one score per node
``packing``      ``pack_to_budget``: full bodies or skeletons, and the honest ignored tail
``sufficiency``  gathering | sufficient | saturated, from the salience curve
``impact``       the bounded blast radius of a change
``runtime``      ``FocusEngine``: focus, seek and impact over one graph

Nothing is imported here, so that reading ``coderooms.focus.graph`` (as the indexer
does) does not pull in numpy and scipy; import the module you need.
"""
