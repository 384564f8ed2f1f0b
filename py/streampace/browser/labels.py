"""The view's fixed words, replaceable by the host; pure Python.

A page may replace any of them (`labels` option, `data-labels` JSON); the
rest follow the page's `lang` where we ship the words, English otherwise.
Labels are shown as text only (textContent), never parsed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["ENGLISH", "SHIPPED", "labels_for"]

ENGLISH: dict[str, str] = {
    "user": "You",
    "assistant": "Assistant",
    "reasoning": "Reasoning",
    "toolCall": "Tool call",
    "generating": "Generating…",
    "done": "Done",
    "stopped": "Stopped",
    "error": "Error",
    "waiting": "Waiting: sent when the current answer ends",
    "sending": "Sending…",
    "withdraw": "Withdraw",
    "lost": "This answer was cut off: the server lost the conversation. "
            "What you ask next starts a new one.",
    "reconnecting": "Reconnecting",
    "notReconnecting": "Not reconnecting.",
}

_FRENCH = {
    "user": "Vous", "assistant": "Assistant", "reasoning": "Raisonnement",
    "toolCall": "Appel d'outil", "generating": "Génération…", "done": "Terminé",
    "stopped": "Arrêté", "error": "Erreur",
    "waiting": "En attente : envoyé quand la réponse en cours se termine",
    "sending": "Envoi…", "withdraw": "Retirer",
    "lost": "Cette réponse a été interrompue : le serveur a perdu la conversation. "
            "Votre prochaine question en commence une nouvelle.",
    "reconnecting": "Reconnexion", "notReconnecting": "Pas de reconnexion.",
}
_GERMAN = {
    "user": "Sie", "assistant": "Assistent", "reasoning": "Überlegung",
    "toolCall": "Werkzeugaufruf", "generating": "Wird erzeugt…", "done": "Fertig",
    "stopped": "Angehalten", "error": "Fehler",
    "waiting": "Wartet: wird gesendet, wenn die aktuelle Antwort endet",
    "sending": "Wird gesendet…", "withdraw": "Zurückziehen",
    "lost": "Diese Antwort wurde abgeschnitten: Der Server hat das Gespräch verloren. "
            "Ihre nächste Frage beginnt ein neues.",
    "reconnecting": "Neue Verbindung", "notReconnecting": "Keine neue Verbindung.",
}
_SPANISH = {
    "user": "Tú", "assistant": "Asistente", "reasoning": "Razonamiento",
    "toolCall": "Llamada a herramienta", "generating": "Generando…", "done": "Listo",
    "stopped": "Detenido", "error": "Error",
    "waiting": "En espera: se enviará cuando termine la respuesta actual",
    "sending": "Enviando…", "withdraw": "Retirar",
    "lost": "Esta respuesta se cortó: el servidor perdió la conversación. "
            "Lo próximo que preguntes empieza una nueva.",
    "reconnecting": "Reconectando", "notReconnecting": "Sin reconexión.",
}
# Primary language subtag -> words.
SHIPPED: dict[str, dict[str, str]] = {"en": ENGLISH, "fr": _FRENCH, "de": _GERMAN,
                                      "es": _SPANISH}
_MAX_LABEL_CHARS = 200


def labels_for(lang: Any = None, overrides: Any = None) -> dict[str, str]:
    """The words for a page in ``lang`` (a BCP 47 tag), with the host's
    ``overrides`` (a mapping or its JSON text) on top.  Unknown keys and
    non-string values are refused with ValueError: a typo should not pass
    silently."""
    primary = lang.split("-")[0].strip().lower() if isinstance(lang, str) else ""
    words = dict(ENGLISH)
    words.update(SHIPPED.get(primary, {}))
    if overrides is None or overrides == "":
        return words
    if isinstance(overrides, str):
        try:
            overrides = json.loads(overrides)
        except ValueError as exc:
            raise ValueError(f"labels: not JSON ({exc})") from None
    if not isinstance(overrides, Mapping):
        raise ValueError("labels: expected an object of words")
    for key, value in overrides.items():
        if key not in ENGLISH:
            raise ValueError(f"labels: unknown word {str(key)[:40]!r}; one of {sorted(ENGLISH)}")
        if not isinstance(value, str) or len(value) > _MAX_LABEL_CHARS:
            raise ValueError(f"labels.{key}: expected a string of at most "
                             f"{_MAX_LABEL_CHARS} characters")
        words[key] = value
    return words
