for i in {1..16}; do
  echo $i
done