"""The multinomial family of MultinomialNB: :mod:`.family`, and EM / data augmentation
for rows with missing counts (:mod:`.missing`)."""
