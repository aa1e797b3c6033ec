"""The foundation every layer shares: errors, the sample and run-table schemas, text and number
formatting, atomic outputs, progress, the classifier and peaks. Imports nothing above it."""
