"""cypherturn: executable, conversational Text-to-Cypher.

Generate Cypher from plain language, execute it read-only on a real graph,
repair it from the engine's own errors (RAS), and benchmark models on the
multi-turn CypherTurn benchmark.
"""

from cypherturn.errors import CypherTurnError

__version__ = "0.1.0"

__all__ = ["CypherTurnError", "__version__"]
