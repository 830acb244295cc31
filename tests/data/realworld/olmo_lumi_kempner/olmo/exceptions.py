# trimmed: olmo/exceptions.py exists in allenai/OLMo@214aea5; only its name matters here
