from hrimport.cli import main

main()
